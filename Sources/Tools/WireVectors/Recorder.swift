import MemoryTransport
import Pipeline
import Session
import TestDoubles
import Transfer

/// Runs a real `SenderSession` against a real `ReceiverSession` on a virtual clock and writes
/// down every datagram, so that either endpoint alone can later be replayed against the log.
///
/// The discipline (the replay follows the same steps; README in Tests/Vectors/blesend):
/// 1. A connection starts: the sender connects, then the receiver accepts (`connect N`).
/// 2. A round, at the current time: the sender sends everything it has (`nextDatagram` until
///    nil), each datagram delivered to the receiver at once, in order; then the receiver sends
///    everything it has, each delivered to the sender. If either sent anything, another round.
/// 3. Nothing moved: the clock moves to the earlier of the two `nextDeadline`s, and the sender's
///    then the receiver's `handleTimers` run (`tick`). Back to 2.
/// Steps 2 and 3 are `VirtualNetwork.run`'s rounds and ticks on a perfect link.
/// The session ends at the first error either side raises (nothing after it), or when the sender
/// has finished and the receiver's connection is complete, checked after each round.
public enum Recorder {
    /// Virtual time after which a recording is abandoned.
    static let timeLimit = Duration.seconds(600)

    public static func record(_ scenario: Scenario) throws(RecordingError) -> WireVector {
        var vector = scenario.vector
        let parties: VectorParties
        do {
            parties = try VectorParties(vector)
        } catch {
            throw .setup(error.description)
        }
        let ids = TransferIDQueue(vector.transferIDs)
        let store = MemoryFileStore()
        var sender = parties.makeSender(ids: ids)
        var receiver = parties.makeReceiver(store: store)
        let log = Transcript()
        // The sender is side a, the receiver side b, on a clean link without latency: every
        // datagram arrives in the round it was sent, as the discipline says.
        var network = VirtualNetwork.perfect()
        network.observer = { now, event in log.note(event, at: now) }
        let attack = scenario.attack
        network.tap = { side, index, datagram in attack.deliver(datagram, from: side == .a ? .sender : .receiver, index: index) }

        var outcome: WireVector.Expectation?
        connections: for (index, connection) in vector.connections.enumerated() {
            network.reconnect(after: index > 0 ? scenario.reconnectDelay : .zero,
                              cutAfter: index < scenario.cuts.count ? scenario.cuts[index] : nil)
            log.append(.connect(number: index + 1), at: network.now)
            do { try sender.open(connection, extensions: vector.configuration.extensions, now: network.now) } catch {
                outcome = .failure(code: error.code, raisedBy: .sender)
                break
            }
            do { try receiver.open(connection, extensions: vector.configuration.extensions, now: network.now) } catch {
                outcome = .failure(code: error.code, raisedBy: .receiver)
                break
            }
            let ending: VirtualNetwork.Ending
            do throws(VirtualNetwork.Failure<SessionError, SessionError>) {
                ending = try network.run(&sender, &receiver, until: Instant.zero.advanced(by: timeLimit)) { sender, receiver, _, step in
                    // The end is checked after every round, never right after a tick.
                    step == .tick ? false : sender.isFinished && receiver.connectionComplete
                }
            } catch {
                switch error {
                case .a(let error): outcome = .failure(code: error.code, raisedBy: .sender)
                case .b(let error): outcome = .failure(code: error.code, raisedBy: .receiver)
                }
                break connections
            }
            switch ending {
            case .cut:
                sender.close(now: network.now)
                receiver.close(now: network.now)
                continue connections
            case .done:
                outcome = .success
                break connections
            case .idle:
                throw .stuck(at: network.now)
            case .timeLimit:
                throw .timeLimit
            }
        }
        log.flush()
        guard let outcome else { throw .ranOutOfConnections }
        guard !ids.overdrawn else { throw .ranOutOfTransferIDs }

        let intended = vector
        vector.events = log.events
        vector.expect = outcome
        for (index, name) in parties.sources.map(\.name).enumerated() {
            vector.files[index].stored = store.committed[name] == vector.files[index].contents
        }
        guard vector.expect == intended.expect, vector.files == intended.files else {
            throw .unintendedOutcome(expected: intended.expect, got: vector.expect, stored: vector.files.map(\.stored))
        }
        return vector
    }
}

/// The log being written from what the network reports: each datagram as it was sent and, if the
/// attacker changed or dropped it, as it arrived.
private final class Transcript {
    private(set) var events: [WireVector.Event] = []
    /// A datagram sent and not yet seen arriving.
    private var pending: (side: WireVector.Side, datagram: [UInt8], time: Instant)?

    func append(_ kind: WireVector.Event.Kind, at time: Instant) {
        flush()
        events.append(WireVector.Event(time: time, kind: kind))
    }

    func note(_ event: VirtualNetwork.Event, at time: Instant) {
        switch event {
        case .sent(let from, let datagram):
            flush()
            pending = (from == .a ? .sender : .receiver, datagram, time)
        case .arrived(let to, let datagram):
            let side: WireVector.Side = to == .a ? .receiver : .sender
            if let sent = pending, sent.side == side, sent.datagram == datagram {
                events.append(WireVector.Event(time: time, kind: .datagram(side == .sender ? .senderToReceiver : .receiverToSender, datagram)))
                pending = nil
            } else {
                flush()
                events.append(WireVector.Event(time: time, kind: .datagram(to == .b ? .toReceiver : .toSender, datagram)))
            }
        case .tick(let due):
            append(.tick(senderDue: due.contains(.a), receiverDue: due.contains(.b)), at: time)
        case .cut:
            append(.cut, at: time)
        }
    }

    /// A datagram sent that did not arrive (dropped, replaced, or not delivered) is logged as sent.
    func flush() {
        guard let sent = pending else { return }
        pending = nil
        events.append(WireVector.Event(time: sent.time, kind: .datagram(sent.side == .sender ? .sentBySender : .sentByReceiver, sent.datagram)))
    }
}
