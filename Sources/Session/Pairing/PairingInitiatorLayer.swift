import DequeModule
import Pairing
import Pipeline

/// The pairing sender's top layer (`blesend pair`, docs/protocol.md §9): CPace as the initiator,
/// then the static keys under its key. Sends P1 at once, reads P2 (or a one-byte answer), sends
/// P3, reads P4. Framing messages below, nothing above.
///
/// Each step has a deadline: P2 within `handshakeTimeout` of P1 (the receiver computes no more
/// than a handshake), P4 within `answerTimeout` of P3 (the receiver writes one file first).
struct PairingInitiatorLayer: Layer {
    typealias Lower = [UInt8]
    typealias Upper = Never
    typealias Failure = SessionError
    typealias Signal = StackSignal

    enum Stage: Equatable {
        case awaitingMessage2(deadline: Instant)
        case awaitingMessage4(PairingPeer, deadline: Instant)
        /// P4 read: the receiver pinned our key; the caller may pin the receiver's.
        case paired(PairingPeer)
    }

    private var initiator: PairingInitiator
    private(set) var stage: Stage
    private var down: Deque<[UInt8]> = []
    private let answerTimeout: Duration

    init(initiator: PairingInitiator, now: Instant, handshakeTimeout: Duration, answerTimeout: Duration) {
        self.initiator = initiator
        self.answerTimeout = answerTimeout
        down.append(self.initiator.message1())
        stage = .awaitingMessage2(deadline: now.advanced(by: handshakeTimeout))
    }

    mutating func receive(_ message: [UInt8], now: Instant) throws(SessionError) {
        switch stage {
        case .awaitingMessage2:
            let read: (peer: PairingPeer, message3: [UInt8])
            do { read = try initiator.readMessage2(message) } catch { throw .pairing(error) }
            down.append(read.message3)
            stage = .awaitingMessage4(read.peer, deadline: now.advanced(by: answerTimeout))
        case .awaitingMessage4(let peer, _):
            do { try initiator.readMessage4(message) } catch { throw .pairing(error) }
            stage = .paired(peer)
        case .paired:
            // Nothing follows P4.
            throw .pairing(.outOfOrder)
        }
    }

    mutating func nextUp() -> Never? { nil }

    mutating func nextDown(now: Instant) -> [UInt8]? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        guard let deadline = nextDeadline, now >= deadline else { return }
        throw .handshakeTimeout
    }

    var nextDeadline: Instant? {
        switch stage {
        case .awaitingMessage2(let deadline), .awaitingMessage4(_, let deadline): deadline
        case .paired: nil
        }
    }

    var canSend: Bool { false }
}
