import DequeModule
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The sender's secure channel: Noise IK as the initiator, then records. Message 1 carries the
/// timestamp and the opening transfer message, message 2 the receiver's answer; every message
/// after that is one record. Framing messages below, transfer messages above.
struct InitiatorChannel: Layer {
    typealias Lower = [UInt8]
    typealias Upper = TransferMessage
    typealias Failure = SessionError

    private enum State {
        case awaitingAnswer(NoiseIKInitiator, deadline: Instant)
        case established(SecureTransferCodec)
        /// Transient, while the codec is moved out (so its buffers are not copied on write).
        case busy
    }

    private var state: State
    private var down: Deque<[UInt8]> = []
    private var up: Deque<TransferMessage> = []
    private let rekeyAfter: UInt64
    /// Set when message 2 authenticated the receiver; the session takes it (`takeAuthentication`).
    private var authenticatedNow = false

    /// Writes message 1: `wallClock` (nanoseconds since the Unix epoch, for the receiver's replay
    /// guard) and `opening`. `ephemeral` is for tests only.
    init(identity: Identity, receiverKey: PublicKey, opening: TransferMessage, wallClock: UInt64,
         ephemeral: SecureBytes?, now: Instant, configuration: SessionConfiguration) throws(SessionError) {
        var payload: [UInt8] = []
        payload.appendBigEndian(wallClock)
        opening.encode(into: &payload)
        do {
            var initiator = try NoiseIKInitiator(localStatic: identity.secretKey, remoteStatic: receiverKey.bytes,
                                                 prologue: blesendPrologue, ephemeral: ephemeral)
            down.append(try initiator.writeMessage1(payload: payload))
            state = .awaitingAnswer(initiator, deadline: now.advanced(by: configuration.handshakeTimeout))
        } catch {
            throw .handshake(error)
        }
        rekeyAfter = configuration.rekeyAfterRecords
    }

    var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Whether the receiver authenticated since the last call.
    mutating func takeAuthentication() -> Bool {
        defer { authenticatedNow = false }
        return authenticatedNow
    }

    mutating func receive(_ message: [UInt8], now: Instant) throws(SessionError) {
        switch state {
        case .awaitingAnswer(var initiator, _):
            if message == refusalMessage { throw .refusedByPeer }
            let payload: [UInt8], keys: HandshakeResult
            do {
                payload = try initiator.readMessage2(message)
                keys = try initiator.split()
            } catch {
                throw .peerNotAuthenticated
            }
            state = .established(makeSecureTransferCodec(send: keys.initiatorToResponder, receive: keys.responderToInitiator,
                                                         rekeyAfter: rekeyAfter))
            authenticatedNow = true
            // Message 2 authenticated: the pinned receiver itself sent whatever is in it.
            do { up.append(try TransferMessage(decoding: payload)) } catch { throw .transfer(.malformedMessage(error)) }
        case .established(var codec):
            state = .busy
            defer { state = .established(codec) }
            up.append(try codec.open(message))
        case .busy:
            break
        }
    }

    mutating func send(_ message: TransferMessage, now: Instant) throws(SessionError) {
        guard case .established(var codec) = state else { return }
        state = .busy
        defer { state = .established(codec) }
        down.append(try codec.seal(message))
    }

    mutating func nextUp() -> TransferMessage? { up.popFirst() }

    mutating func nextDown(now: Instant) -> [UInt8]? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        // No message 2 in time: whoever took message 1 is not answering (a silent impostor needs
        // no key to do this); the driver treats it like a refusal by that device.
        if case .awaitingAnswer(_, let deadline) = state, now >= deadline { throw .handshakeTimeout }
    }

    var nextDeadline: Instant? {
        if case .awaitingAnswer(_, let deadline) = state { return deadline }
        return nil
    }

    /// One record at a time: the next is sealed only once the link took this one.
    var canSend: Bool { isEstablished && down.isEmpty }
}
