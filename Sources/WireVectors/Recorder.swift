import Pipeline
import Session
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
        var sender = parties.makeSender(ids: ids)
        var receiver = parties.makeReceiver(store: store)
        var log = Transcript(attack: scenario.attack)

        var outcome: WireVector.Expectation?
        connections: for (index, connection) in vector.connections.enumerated() {
            if index > 0 { log.now = log.now.advanced(by: scenario.reconnectDelay) }
            log.append(.connect(number: index + 1))
            do { try sender.open(connection, now: log.now) } catch {
                outcome = .failure(code: error.vectorCode, raisedBy: .sender)
                break
            }
            do { try receiver.open(connection, now: log.now) } catch {
                outcome = .failure(code: error.vectorCode, raisedBy: .receiver)
                break
            }
            let cut = index < scenario.cuts.count ? scenario.cuts[index] : nil
            var sentOnLink = 0
            while true {
                // A round: the sender's batch, then the receiver's.
                let (fromSender, senderError) = sender.drain(now: log.now)
                let deliverable = senderError != nil ? 0 : cut.map { max(0, min(fromSender.count, $0 - sentOnLink)) } ?? fromSender.count
                sentOnLink += fromSender.count
                let linkCut = cut.map { sentOnLink >= $0 } ?? false
                if let error = log.pass(fromSender, from: .sender, deliveringFirst: deliverable, to: &receiver) {
                    outcome = .failure(code: error.vectorCode, raisedBy: .receiver)
                    break connections
                }
                if let senderError {
                    outcome = .failure(code: senderError.vectorCode, raisedBy: .sender)
                    break connections
                }
                let (fromReceiver, _) = receiver.drain(now: log.now)
                if let error = log.pass(fromReceiver, from: .receiver, deliveringFirst: linkCut ? 0 : fromReceiver.count, to: &sender) {
                    outcome = .failure(code: error.vectorCode, raisedBy: .sender)
                    break connections
                }
                if linkCut {
                    log.append(.cut)
                    sender.close(now: log.now)
                    receiver.close(now: log.now)
                    continue connections
                }
                if sender.isFinished && receiver.connectionComplete {
                    outcome = .success
                    break connections
                }
                if !fromSender.isEmpty || !fromReceiver.isEmpty { continue }

                // Nothing moved: run the clock to the next deadline.
                let senderDeadline = sender.nextDeadline, receiverDeadline = receiver.nextDeadline
                guard let next = [senderDeadline, receiverDeadline].compactMap({ $0 }).min() else { throw .stuck(at: log.now) }
                guard next >= log.now else { throw .deadlineInThePast(at: log.now) }
                guard next.duration(since: .zero) <= timeLimit else { throw .timeLimit }
                log.now = next
                log.append(.tick(senderDue: senderDeadline == next, receiverDue: receiverDeadline == next))
                do { try sender.handleTimers(now: log.now) } catch {
                    outcome = .failure(code: error.vectorCode, raisedBy: .sender)
                    break connections
                }
                do { try receiver.handleTimers(now: log.now) } catch {
                    outcome = .failure(code: error.vectorCode, raisedBy: .receiver)
                    break connections
                }
            }
        }
        guard let outcome else { throw .ranOutOfConnections }
        guard !ids.overdrawn else { throw .ranOutOfTransferIDs }

        let intended = vector
        vector.events = log.events
        vector.expect = outcome
        for (index, name) in parties.sources.map(\.name).enumerated() {
            vector.files[index].stored = store.committed[name] == vector.files[index].contents
        }
        guard vector.expect == intended.expect, vector.files == intended.files else {
            throw .unintendedOutcome(expected: intended.expect, got: vector.expect,
                                     stored: vector.files.map(\.stored))
        }
        return vector
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
