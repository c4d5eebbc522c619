import Keys
import Sodium

/// The receiver's side of pairing (`blerecv pair`, docs/protocol.md §9), sans-IO:
/// receive P1 → `readMessage1` → send P2 → receive P3 → `readMessage3` → pin the sender's key →
/// `message4` → send P4.
///
/// The receiver shows the code, valid for this one attempt. `readMessage3` authenticates the
/// sender (it knew the code) and names it; pin its key, then send `message4`. Nothing may be
/// written before `readMessage3` succeeds. If `readMessage1` throws, the caller answers with
/// `PairingLayout.refusedAnswer` and closes; after any later failure it sends nothing more. A call
/// in the wrong state throws `.outOfOrder`; after any failure (that one included) every call
/// throws `.outOfOrder`. After a failure the caller burns the code.
///
/// Randomness, all drawn in `init`: the scalar's 64 bytes.
public struct PairingResponder {
    private enum Stage { case ready, sentMessage2, peerKnown, complete, failed }

    private var stage = Stage.ready
    private let identity: Identity
    private let name: String
    private let code: PairingPasscode
    /// `yb`, until P1 has been read.
    private var scalar: SecureBytes?
    /// `k_S`, from P1 until P3 has been read.
    private var senderKey: SecureBytes?
    /// `k_R`, from P1 until P4 has been sealed.
    private var receiverKey: SecureBytes?
    private var associatedData: [UInt8] = []

    /// - Parameters:
    ///   - identity: our static key pair; its public key goes to the sender in P2.
    ///   - name: the name we suggest for ourselves; `.malformed` if it breaks `PairingName`.
    ///   - code: the code we show.
    ///   - random: the random source (`Random.bytes` unless testing).
    public init(identity: Identity, name: String, code: PairingPasscode, random: PairingRandomSource = Random.bytes) throws(PairingError) {
        guard PairingName.isValid(name) else { throw .malformed }
        self.identity = identity
        self.name = name
        self.code = code
        scalar = try PairingRandomness.scalar(from: random)
    }

    /// Reads P1 and returns P2. `.malformed` for a wrong length or mode byte, `.invalidShare` for
    /// a Ya that does not decode or gives the identity.
    public mutating func readMessage1(_ message: [UInt8]) throws(PairingError) -> [UInt8] {
        guard stage == .ready, let scalar else { throw outOfOrder() }
        stage = .failed
        self.scalar = nil
        guard message.count == PairingLayout.p1Length, message[0] == PairingLayout.modeByte else { throw .malformed }
        let sid = Array(message[1..<1 + PairingLayout.sidLength])
        let initiatorShare = Array(message[(1 + PairingLayout.sidLength)...])
        let responderShare: [UInt8]
        let sharedPoint: SecureBytes
        do {
            let generator = try CPace.calculateGenerator(prs: code.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid)
            responderShare = try CPace.share(scalar: scalar, generator: generator)
            sharedPoint = try CPace.sharedPoint(scalar: scalar, peerShare: initiatorShare)
        } catch {
            throw .invalidShare
        }
        let isk = CPace.intermediateSessionKey(
            sid: sid, sharedPoint: sharedPoint,
            initiatorShare: initiatorShare, initiatorData: [], responderShare: responderShare, responderData: [])
        let cipher = PairingCipher(intermediateSessionKey: isk)
        let associatedData = message + responderShare
        let sealed = try PairingCipher.seal(
            key: cipher.receiverKey, counter: PairingLayout.p2Counter, associatedData: associatedData,
            plaintext: PairingIntroduction.encode(publicKey: identity.publicKey, name: name))
        self.associatedData = associatedData
        senderKey = cipher.senderKey
        receiverKey = cipher.receiverKey
        stage = .sentMessage2
        return responderShare + sealed
    }

    /// Reads P3: the sender, to pin now. `.malformed` for a wrong length, `.wrongCode` when it
    /// does not authenticate, `.malformed` for a bad key or name inside it.
    public mutating func readMessage3(_ message: [UInt8]) throws(PairingError) -> PairingPeer {
        guard stage == .sentMessage2, let senderKey else { throw outOfOrder() }
        stage = .failed
        self.senderKey = nil
        guard (PairingLayout.minP3Length...PairingLayout.maxP3Length).contains(message.count) else {
            receiverKey = nil
            throw .malformed
        }
        guard let introduction = PairingCipher.open(
            key: senderKey, counter: PairingLayout.p3Counter, associatedData: associatedData, sealed: message[...]) else {
            receiverKey = nil
            throw .wrongCode
        }
        do {
            let peer = try PairingIntroduction.decode(introduction, checkedWith: identity)
            stage = .peerKnown
            return peer
        } catch {
            receiverKey = nil
            throw error
        }
    }

    /// P4, once the sender's key (from `readMessage3`) is pinned: "pinned", sealed.
    public mutating func message4() throws(PairingError) -> [UInt8] {
        guard stage == .peerKnown, let receiverKey else { throw outOfOrder() }
        stage = .failed
        self.receiverKey = nil
        let message = try PairingCipher.seal(
            key: receiverKey, counter: PairingLayout.p4Counter, associatedData: associatedData,
            plaintext: PairingLayout.pinnedConfirmation)
        stage = .complete
        return message
    }

    /// A call in the wrong state: the machine dies as on any failure (every secret dropped).
    private mutating func outOfOrder() -> PairingError {
        stage = .failed
        scalar = nil
        senderKey = nil
        receiverKey = nil
        return .outOfOrder
    }

    /// Whether `message4` has been made.
    public var isComplete: Bool { stage == .complete }
}
