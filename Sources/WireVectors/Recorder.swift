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
        var run = Run(sender: parties.makeSender(ids: ids), receiver: parties.makeReceiver(store: store),
                      log: Transcript(attack: scenario.attack))

        var outcome: WireVector.Expectation?
        connections: for (index, connection) in vector.connections.enumerated() {
            if index > 0 { run.log.now = run.log.now.advanced(by: scenario.reconnectDelay) }
            if let end = run.connect(connection, number: index + 1) {
                outcome = end
                break
            }
            var link = Run.Link(cutAfter: index < scenario.cuts.count ? scenario.cuts[index] : nil)
            while true {
                switch run.round(on: &link) {
                case .moved: continue
                case .cut: continue connections
                case .ended(let end):
                    outcome = end
                    break connections
                case .quiet:
                    if let end = try run.tick() {
                        outcome = end
                        break connections
                    }
                }
            }
        }
        guard let outcome else { throw .ranOutOfConnections }
        guard !ids.overdrawn else { throw .ranOutOfTransferIDs }

        let intended = vector
        vector.events = run.log.events
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

/// The two endpoints and the log, stepped as the discipline says.
private struct Run {
    var sender: SenderSession
    var receiver: ReceiverSession
    var log: Transcript

    /// The current link: where it is cut, and how many datagrams the sender has sent on it.
    struct Link {
        let cutAfter: Int?
        var sent = 0
    }

    enum RoundEnd {
        case moved, quiet, cut
        case ended(WireVector.Expectation)
    }

    /// Link `number` comes up: the sender connects, then the receiver accepts. Returns how the
    /// session ended if either failed.
    mutating func connect(_ connection: WireVector.Connection, number: Int) -> WireVector.Expectation? {
        log.append(.connect(number: number))
        do { try sender.open(connection, now: log.now) } catch { return .failure(code: error.code, raisedBy: .sender) }
        do { try receiver.open(connection, now: log.now) } catch { return .failure(code: error.code, raisedBy: .receiver) }
        return nil
    }

    /// One round: the sender's batch delivered to the receiver, then the receiver's to the sender.
    mutating func round(on link: inout Link) -> RoundEnd {
        let (fromSender, senderError) = sender.drain(now: log.now)
        var deliverable = senderError == nil ? fromSender.count : 0
        if let cutAfter = link.cutAfter { deliverable = min(deliverable, max(0, cutAfter - link.sent)) }
        link.sent += fromSender.count
        let cut = link.cutAfter.map { link.sent >= $0 } ?? false
        if let error = log.pass(fromSender, from: .sender, deliveringFirst: deliverable, to: &receiver) {
            return .ended(.failure(code: error.code, raisedBy: .receiver))
        }
        if let senderError { return .ended(.failure(code: senderError.code, raisedBy: .sender)) }

        let (fromReceiver, _) = receiver.drain(now: log.now)
        if let error = log.pass(fromReceiver, from: .receiver, deliveringFirst: cut ? 0 : fromReceiver.count, to: &sender) {
            return .ended(.failure(code: error.code, raisedBy: .sender))
        }
        if cut {
            log.append(.cut)
            sender.close(now: log.now)
            receiver.close(now: log.now)
            return .cut
        }
        if sender.isFinished && receiver.connectionComplete { return .ended(.success) }
        return fromSender.isEmpty && fromReceiver.isEmpty ? .quiet : .moved
    }

    /// Nothing moved: the clock runs to the earlier deadline and both run their timers, the
    /// sender first. Returns how the session ended if either failed.
    mutating func tick() throws(RecordingError) -> WireVector.Expectation? {
        let senderDeadline = sender.nextDeadline, receiverDeadline = receiver.nextDeadline
        guard let next = [senderDeadline, receiverDeadline].compactMap({ $0 }).min() else { throw .stuck(at: log.now) }
        guard next >= log.now else { throw .deadlineInThePast(at: log.now) }
        guard next.duration(since: .zero) <= Recorder.timeLimit else { throw .timeLimit }
        log.now = next
        log.append(.tick(senderDue: senderDeadline == next, receiverDue: receiverDeadline == next))
        do { try sender.handleTimers(now: log.now) } catch { return .failure(code: error.code, raisedBy: .sender) }
        do { try receiver.handleTimers(now: log.now) } catch { return .failure(code: error.code, raisedBy: .receiver) }
        return nil
    }
}

/// The log being written, the clock, and the attacker in the middle.
private struct Transcript {
    let attack: Attack
    var now = Instant.zero
    var events: [WireVector.Event] = []
    /// Datagrams each side has sent so far (the attack counts them).
    var sent: [WireVector.Side: Int] = [.sender: 0, .receiver: 0]

    init(attack: Attack) { self.attack = attack }

    mutating func append(_ kind: WireVector.Event.Kind) {
        events.append(WireVector.Event(time: now, kind: kind))
    }

    /// Logs a batch `side` sent and hands the first `deliverable` of them (as the attacker lets
    /// them through) to `peer`, in order. Returns the error the peer raised, if any: the rest of
    /// the batch is then logged as sent and not delivered.
    mutating func pass(_ batch: [[UInt8]], from side: WireVector.Side, deliveringFirst deliverable: Int,
                       to peer: inout some VectorEndpoint) -> SessionError? {
        let delivered: WireVector.Route = side == .sender ? .senderToReceiver : .receiverToSender
        let undelivered: WireVector.Route = side == .sender ? .sentBySender : .sentByReceiver
        let replaced: WireVector.Route = side == .sender ? .toReceiver : .toSender
        var failure: SessionError?
        for (position, datagram) in batch.enumerated() {
            let index = sent[side, default: 0]
            sent[side] = index + 1
            guard failure == nil, position < deliverable else {
                append(.datagram(undelivered, datagram))
                continue
            }
            guard let arriving = attack.deliver(datagram, from: side, index: index) else {
                append(.datagram(undelivered, datagram))
                continue
            }
            if arriving == datagram {
                append(.datagram(delivered, datagram))
            } else {
                append(.datagram(undelivered, datagram))
                append(.datagram(replaced, arriving))
            }
            do { try peer.receive(datagram: arriving, now: now) } catch { failure = error }
        }
        return failure
    }
}
