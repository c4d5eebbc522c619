import DequeModule
import Pairing
import Pipeline

/// The pairing receiver's top layer (`blerecv pair`, docs/protocol.md §9): CPace as the
/// responder. Reads P1 and answers P2, reads P3, and sends P4 only once its user says the
/// sender's key is pinned (`pinned()`): P4 tells the sender that the receiver kept its key.
///
/// A receiver already pairing with another sender answers every P1 with the one-byte `busy`
/// (`answersBusy`); a P1 it cannot read gets the one-byte refusal. Either way it then ignores the
/// peer until the connection closes.
struct PairingResponderLayer: Layer {
    typealias Lower = [UInt8]
    typealias Upper = Never
    typealias Failure = SessionError
    typealias Signal = StackSignal

    enum Stage: Equatable {
        case awaitingMessage1(deadline: Instant)
        case awaitingMessage3(deadline: Instant)
        /// P3 read: the sender knew the code; waiting for its key to be pinned.
        case awaitingPin(PairingPeer)
        /// P4 sent: paired.
        case paired(PairingPeer)
        /// A one-byte answer sent instead of P2 (`busy` or the refusal): nothing more happens.
        case answered(PairingError)
    }

    private var responder: PairingResponder?
    private(set) var stage: Stage
    private var down: Deque<[UInt8]> = []
    private let answerTimeout: Duration

    /// `responder` nil: another pairing is open, and every P1 is answered `busy`.
    init(responder: PairingResponder?, now: Instant, handshakeTimeout: Duration, answerTimeout: Duration) {
        self.responder = responder
        self.answerTimeout = answerTimeout
        stage = .awaitingMessage1(deadline: now.advanced(by: handshakeTimeout))
    }

    /// The sender's key is pinned: send P4.
    mutating func pinned() throws(SessionError) {
        guard case .awaitingPin(let peer) = stage, var responder = responder.take() else { throw .pairing(.outOfOrder) }
        do { down.append(try responder.message4()) } catch { throw .pairing(error) }
        stage = .paired(peer)
    }

    mutating func receive(_ message: [UInt8], now: Instant) throws(SessionError) {
        switch stage {
        case .awaitingMessage1:
            guard var responder = responder.take() else {
                answer(PairingLayout.busyAnswer, as: .busy)
                return
            }
            do {
                down.append(try responder.readMessage1(message))
            } catch {
                // Not a pairing message (an IK message 1, say): the refusal, which says nothing more.
                answer(PairingLayout.refusedAnswer, as: error)
                return
            }
            self.responder = responder
            stage = .awaitingMessage3(deadline: now.advanced(by: answerTimeout))
        case .awaitingMessage3:
            guard var responder = responder.take() else { throw .pairing(.outOfOrder) }
            let peer: PairingPeer
            do { peer = try responder.readMessage3(message) } catch { throw .pairing(error) }
            self.responder = responder
            stage = .awaitingPin(peer)
        case .awaitingPin, .paired:
            throw .pairing(.outOfOrder)
        case .answered:
            break
        }
    }

    private mutating func answer(_ byte: UInt8, as why: PairingError) {
        down.append([byte])
        stage = .answered(why)
    }

    mutating func nextUp() -> Never? { nil }

    mutating func nextDown(now: Instant) -> [UInt8]? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        guard let deadline = nextDeadline, now >= deadline else { return }
        throw .handshakeTimeout
    }

    var nextDeadline: Instant? {
        switch stage {
        case .awaitingMessage1(let deadline), .awaitingMessage3(let deadline): deadline
        case .awaitingPin, .paired, .answered: nil
        }
    }

    var canSend: Bool { false }
}
