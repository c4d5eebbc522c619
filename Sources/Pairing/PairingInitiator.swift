import Keys
import Sodium

/// The sender's side of pairing (`blesend pair`, docs/protocol.md §9), sans-IO:
/// `message1` → send P1 → receive → `readMessage2` → pin nothing yet, send P3 → receive →
/// `readMessage4` → pin the receiver's key: the pairing is complete.
///
/// The user types the code the receiver shows. `readMessage2` authenticates the receiver (it
/// knew the code) and names it; `readMessage4` says the receiver pinned our key. Nothing may be
/// written before `readMessage4` succeeds. A call in the wrong state throws `.outOfOrder`; after
/// any failure (that one included) every call throws `.outOfOrder` (but `message1`, which only
/// hands out the public P1 again). On a failure the caller closes the connection and sends
/// nothing more.
///
/// Randomness, all drawn in `init` in this order: the sid (16 bytes), then the scalar's 64 bytes.
public struct PairingInitiator {
    private enum Stage { case ready, sentMessage1, awaitingMessage4, complete, failed }

    private var stage = Stage.ready
    private let identity: Identity
    private let name: String
    private let message1Bytes: [UInt8]
    /// `ya`, until P2 has been read.
    private var scalar: SecureBytes?
    /// `k_R`, from P2 until P4 has been read.
    private var receiverKey: SecureBytes?
    private var associatedData: [UInt8] = []

    /// - Parameters:
    ///   - identity: our static key pair; its public key goes to the receiver in P3.
    ///   - name: the name we suggest for ourselves; `.malformed` if it breaks `PairingName`.
    ///   - code: what the user typed.
    ///   - random: the random source (`Random.bytes` unless testing).
    public init(identity: Identity, name: String, code: PairingPasscode, random: PairingRandomSource = Random.bytes) throws(PairingError) {
        guard PairingName.isValid(name) else { throw .malformed }
        self.identity = identity
        self.name = name
        let sid = PairingRandomness.draw(PairingLayout.sidLength, from: random)
        let scalar = try PairingRandomness.scalar(from: random)
        let share: [UInt8]
        do {
            let generator = try CPace.calculateGenerator(prs: code.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid)
            share = try CPace.share(scalar: scalar, generator: generator)
        } catch {
            throw .invalidShare
        }
        self.scalar = scalar
        message1Bytes = [PairingLayout.modeByte] + sid + share
    }

    /// P1: the mode byte, the sid and our share Ya (`PairingLayout.p1Length` bytes). Public
    /// bytes: asking again gives the same message and changes nothing.
    public mutating func message1() -> [UInt8] {
        if stage == .ready { stage = .sentMessage1 }
        return message1Bytes
    }

    /// Reads P2 (or a one-byte answer): the receiver, and P3 to send. Throws `.refused` or `.busy`
    /// for the answers, `.malformed` for a wrong length, `.invalidShare` for a Yb that does not
    /// decode or gives the identity, `.wrongCode` when the sealed part does not authenticate,
    /// `.malformed` for a bad key or name inside it. Pin nothing yet.
    public mutating func readMessage2(_ message: [UInt8]) throws(PairingError) -> (peer: PairingPeer, message3: [UInt8]) {
        guard stage == .sentMessage1, let scalar else { throw outOfOrder() }
        stage = .failed
        self.scalar = nil
        if message.count == 1 {
            switch message[0] {
            case PairingLayout.refusedAnswer: throw .refused
            case PairingLayout.busyAnswer: throw .busy
            default: throw .malformed
            }
        }
        guard (PairingLayout.minP2Length...PairingLayout.maxP2Length).contains(message.count) else { throw .malformed }
        let responderShare = Array(message[..<PairingLayout.shareLength])
        let sealed = message[PairingLayout.shareLength...]
        let sharedPoint: SecureBytes
        do {
            sharedPoint = try CPace.sharedPoint(scalar: scalar, peerShare: responderShare)
        } catch {
            throw .invalidShare
        }
        let sid = Array(message1Bytes[1..<1 + PairingLayout.sidLength])
        let initiatorShare = Array(message1Bytes[(1 + PairingLayout.sidLength)...])
        let isk = CPace.intermediateSessionKey(
            sid: sid, sharedPoint: sharedPoint,
            initiatorShare: initiatorShare, initiatorData: [], responderShare: responderShare, responderData: [])
        let cipher = PairingCipher(intermediateSessionKey: isk)
        let associatedData = message1Bytes + responderShare
        guard let introduction = PairingCipher.open(
            key: cipher.receiverKey, counter: PairingLayout.p2Counter, associatedData: associatedData, sealed: sealed) else {
            throw .wrongCode
        }
        let peer = try PairingIntroduction.decode(introduction, checkedWith: identity)
        let message3 = try PairingCipher.seal(
            key: cipher.senderKey, counter: PairingLayout.p3Counter, associatedData: associatedData,
            plaintext: PairingIntroduction.encode(publicKey: identity.publicKey, name: name))
        self.associatedData = associatedData
        receiverKey = cipher.receiverKey
        stage = .awaitingMessage4
        return (peer, message3)
    }

    /// Reads P4: the receiver pinned our key. After this succeeds, pin the receiver's key (from
    /// `readMessage2`): the pairing is complete. `.malformed` for a wrong length, a P4 that does
    /// not authenticate, or one that says anything else.
    public mutating func readMessage4(_ message: [UInt8]) throws(PairingError) {
        guard stage == .awaitingMessage4, let receiverKey else { throw outOfOrder() }
        stage = .failed
        self.receiverKey = nil
        guard message.count == PairingLayout.p4Length,
              let confirmation = PairingCipher.open(
                key: receiverKey, counter: PairingLayout.p4Counter, associatedData: associatedData, sealed: message[...]),
              confirmation == PairingLayout.pinnedConfirmation else {
            throw .malformed
        }
        stage = .complete
    }

    /// A call in the wrong state: the machine dies as on any failure (every secret dropped).
    private mutating func outOfOrder() -> PairingError {
        stage = .failed
        scalar = nil
        receiverKey = nil
        return .outOfOrder
    }

    /// Whether `readMessage4` has succeeded.
    public var isComplete: Bool { stage == .complete }
}
