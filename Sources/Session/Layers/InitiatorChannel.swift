import DequeModule
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The sender's secure channel: Noise IK as the initiator, then records. Message 1 carries the
/// timestamp and the opening transfer message, message 2 the receiver's answer; every message
/// after that is one record. Framing messages below, transfer messages above.
///
/// Signals: it raises `peerAuthenticated` when message 2 authenticated the receiver.
struct InitiatorChannel: Layer {
    typealias Lower = [UInt8]
    typealias Upper = TransferMessage
    typealias Failure = SessionError
    typealias Signal = StackSignal

    /// Until message 2: the handshake and its deadline. After it: nil, and `records` is set.
    private var handshake: (initiator: NoiseIKInitiator, deadline: Instant)?
    /// The record channel once the handshake is done (an optional, so it is moved out with `take()`
    /// for each record rather than copied).
    private var records: SecureMessageChannel?
    private var down: Deque<[UInt8]> = []
    private var up: Deque<TransferMessage> = []
    private let rekeyAfter: UInt64
    /// Set when message 2 authenticated the receiver, until the stack takes it as a signal.
    private var authenticatedNow = false
    /// The handshake hash after message 2: the first contact code comes from it (`PairingCode`).
    private(set) var handshakeHash: [UInt8] = []

    /// Writes message 1: `wallClock` (nanoseconds since the Unix epoch, for the receiver's replay
    /// guard) and `opening` (an offer, after a `hello` if the sender asks for extensions).
    /// `ephemeral` is for tests only.
    init(identity: Identity, receiverKey: PublicKey, opening: [TransferMessage], wallClock: UInt64,
         ephemeral: SecureBytes?, now: Instant, configuration: SessionConfiguration) throws(SessionError) {
        var payload: [UInt8] = []
        payload.appendBigEndian(wallClock)
        HandshakePayload.encode(opening, into: &payload)
        do {
            var initiator = try NoiseIKInitiator(localStatic: identity.secretKey, remoteStatic: receiverKey.bytes,
                                                 prologue: blesendPrologue, ephemeral: ephemeral)
            down.append(try initiator.writeMessage1(payload: payload))
            handshake = (initiator, now.advanced(by: configuration.handshakeTimeout))
        } catch {
            throw .handshake(error)
        }
        rekeyAfter = configuration.rekeyAfterRecords
    }

    var isEstablished: Bool { records != nil }

    mutating func nextSignal() -> StackSignal? {
        guard authenticatedNow else { return nil }
        authenticatedNow = false
        return .peerAuthenticated
    }

    mutating func receive(_ message: [UInt8], now: Instant) throws(SessionError) {
        if var codec = records.take() {
            defer { records = codec }
            let opened = try codec.open(message)
            // `pending`, `busy` and `notTrusted` stand only in message 2 (docs/protocol.md §8.5-8.7).
            if TransferMessage.Kind.messageTwoOnly.contains(opened.kind) { throw .transfer(.unexpected(opened.kind)) }
            up.append(opened)
            return
        }
        guard var initiator = handshake?.initiator else { return }
        if message == refusalMessage { throw .refusedByPeer }
        let payload: [UInt8], keys: HandshakeResult
        do {
            payload = try initiator.readMessage2(message)
            keys = try initiator.split()
        } catch {
            throw .peerNotAuthenticated
        }
        handshake = nil
        handshakeHash = keys.handshakeHash
        records = SecureMessageChannel(send: keys.initiatorToResponder, receive: keys.responderToInitiator, rekeyAfter: rekeyAfter)
        authenticatedNow = true
        // Message 2 authenticated: the pinned receiver itself sent whatever is in it.
        do { up += try HandshakePayload.decode(payload) } catch { throw .transfer(.malformedMessage(error)) }
    }

    mutating func send(_ message: TransferMessage, now: Instant) throws(SessionError) {
        guard var codec = records.take() else { return }
        defer { records = codec }
        down.append(try codec.seal(message))
    }

    mutating func nextUp() -> TransferMessage? { up.popFirst() }

    mutating func nextDown(now: Instant) -> [UInt8]? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        // No message 2 in time: whoever took message 1 is not answering (a silent impostor needs
        // no key to do this); the driver treats it like a refusal by that device.
        if let deadline = handshake?.deadline, now >= deadline { throw .handshakeTimeout }
    }

    var nextDeadline: Instant? { handshake?.deadline }

    /// One record at a time: the next is sealed only once the link took this one.
    var canSend: Bool { isEstablished && down.isEmpty }
}
