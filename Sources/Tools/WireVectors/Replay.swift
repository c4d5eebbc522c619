import Pipeline
import Session
import TestDoubles
import Transfer

/// Replays a vector against one real endpoint, with the log standing in for the other: the same
/// steps as `Recorder`, where the missing side's datagrams come from the log and the replayed
/// side's must equal the log's, byte for byte and in order.
public enum Replay {
    /// Replays `vector` against a fresh `side` set up from the header alone, then checks the end
    /// against `expect:` (and, for the receiver, the files it holds; for the sender after a
    /// success, that it learnt each file's fate). Returns what the replayed sender reported
    /// (nothing for the receiver): a first contact's code, for one.
    @discardableResult
    public static func run(_ vector: WireVector, against side: WireVector.Side) throws(ReplayFailure) -> [SenderSession.Event] {
        let parties: VectorParties
        do {
            parties = try VectorParties(vector)
        } catch {
            throw ReplayFailure(side: side, .setup(error.description))
        }
        let schedule = try Schedule(vector.events)
        switch side {
        case .sender:
            let ids = TransferIDQueue(vector.transferIDs)
            var player = Player(vector: vector, endpoint: parties.makeSender(ids: ids))
            try player.play(schedule)
            guard !ids.overdrawn else { throw ReplayFailure(side: side, .wrongOutcome("drew more transfer ids than the header lists")) }
            let events = player.endpoint.takeEvents()
            guard vector.expect == .success else { return events }
            guard player.endpoint.isFinished else { throw ReplayFailure(side: side, .wrongOutcome("not finished at the end of a success")) }
            for (index, file) in vector.files.enumerated() where !events.contains(where: { Self.settles(index, stored: file.stored, $0) }) {
                throw ReplayFailure(side: side, .wrongOutcome("file \(index + 1) did not end \(file.stored ? "saved" : "failed")"))
            }
            return events
        case .receiver:
            let store = MemoryFileStore()
            var player = Player(vector: vector, endpoint: parties.makeReceiver(store: store))
            try player.play(schedule)
            if vector.expect == .success, !player.endpoint.connectionComplete {
                throw ReplayFailure(side: side, .wrongOutcome("connection not complete at the end of a success"))
            }
            guard store.committed == parties.storedFiles else {
                throw ReplayFailure(side: side, .wrongOutcome(
                    "holds \(store.committed.keys.sorted()), expected \(parties.storedFiles.keys.sorted()) (or other contents)"))
            }
            return []
        }
    }

    private static func settles(_ index: Int, stored: Bool, _ event: SenderSession.Event) -> Bool {
        switch event {
        case .transfer(.fileSaved(let saved, _, _, _, _)): stored && saved == index
        case .transfer(.fileFailed(let failed, _)): !stored && failed == index
        default: false
        }
    }
}

/// Drives one endpoint through a schedule (see `Replay`).
private struct Player<Endpoint: VectorEndpoint> {
    let vector: WireVector
    var endpoint: Endpoint
    /// The code of the error the endpoint raised: after it, the log may not involve the endpoint again.
    private var raised: String?
    /// The time of the last step (the empty round before a tick runs at it).
    private var clock = Instant.zero
    private var side: WireVector.Side { Endpoint.side }

    init(vector: WireVector, endpoint: Endpoint) {
        self.vector = vector
        self.endpoint = endpoint
    }

    mutating func play(_ schedule: Schedule) throws(ReplayFailure) {
        for (position, timed) in schedule.steps.enumerated() {
            // At a connect or a tick the sender goes first; when it ends the session there, the receiver does not run.
            let skipped = side == .receiver && position == schedule.steps.count - 1 && vector.expect.raisedBy == .sender
            if let raised {
                guard !involvesEndpoint(timed.step) else {
                    throw ReplayFailure(side: side, event: timed.number, time: timed.time, .logContinuesAfterError(raised))
                }
                continue
            }
            switch timed.step {
            case .connect(let number):
                guard vector.connections.indices.contains(number - 1) else {
                    throw ReplayFailure(side: side, event: timed.number, .malformedLog("no connection \(number) in the header"))
                }
                if !skipped {
                    do { try endpoint.open(vector.connections[number - 1], extensions: vector.configuration.extensions, now: timed.time) } catch {
                        try raise(error, event: timed.number, time: timed.time)
                    }
                }
            case .round(let senderHalf, let receiverHalf):
                if side == .sender {
                    try send(senderHalf, at: timed.time, event: timed.number)
                    if raised == nil {
                        try take(receiverHalf)
                    } else if let line = receiverHalf.first(where: { $0.route.destination == side }) {
                        throw ReplayFailure(side: side, event: line.number, time: line.time, .logContinuesAfterError(raised ?? ""))
                    }
                } else {
                    try take(senderHalf)
                    if raised == nil {
                        try send(receiverHalf, at: timed.time, event: timed.number)
                    } else if let line = receiverHalf.first(where: { $0.route.origin == side }) {
                        throw ReplayFailure(side: side, event: line.number, time: line.time, .logContinuesAfterError(raised ?? ""))
                    }
                }
            case .tick(let senderDue, let receiverDue):
                // The round before a tick moved nothing: neither side had anything to send.
                try send([], at: clock, event: timed.number)
                try checkDeadline(due: side == .sender ? senderDue : receiverDue, at: timed.time, event: timed.number)
                if !skipped {
                    do { try endpoint.handleTimers(now: timed.time) } catch {
                        try raise(error, event: timed.number, time: timed.time)
                    }
                }
            case .cut:
                endpoint.close(now: timed.time)
            }
            clock = timed.time
        }
        if case .failure(let code, let by) = vector.expect, by == side, raised == nil {
            throw ReplayFailure(side: side, .wrongOutcome("the log ended without \(code)"))
        }
    }

    /// Drains the endpoint and checks what it sends against the lines of `half` it sent.
    private mutating func send(_ half: [Schedule.Line], at time: Instant, event: Int) throws(ReplayFailure) {
        let expected = half.filter { $0.route.origin == side }
        let (actual, error) = endpoint.drain(now: time)
        for (index, datagram) in actual.enumerated() {
            guard index < expected.count else { throw ReplayFailure(side: side, event: event, time: time, .extraDatagram(datagram)) }
            guard datagram == expected[index].bytes else {
                throw ReplayFailure(side: side, event: expected[index].number, time: time,
                                    .wrongDatagram(expected: expected[index].bytes, actual: datagram))
            }
        }
        if actual.count < expected.count {
            let missing = expected[actual.count]
            throw ReplayFailure(side: side, event: missing.number, time: time, .missingDatagram(missing.bytes))
        }
        if let error { try raise(error, event: expected.last?.number ?? event, time: time) }
    }

    /// Hands the endpoint the lines of `half` addressed to it.
    private mutating func take(_ half: [Schedule.Line]) throws(ReplayFailure) {
        for line in half where line.route.destination == side {
            if let raised { throw ReplayFailure(side: side, event: line.number, time: line.time, .logContinuesAfterError(raised)) }
            do { try endpoint.receive(datagram: line.bytes, now: line.time) } catch {
                try raise(error, event: line.number, time: line.time)
            }
        }
    }

    /// The recorder ticks at the earlier deadline of the two: the endpoint's is exactly then when
    /// the tick names it, and later (or none) otherwise.
    private func checkDeadline(due: Bool, at time: Instant, event: Int) throws(ReplayFailure) {
        let deadline = endpoint.nextDeadline
        if due, deadline != time {
            throw ReplayFailure(side: side, event: event, time: time, .wrongDeadline(expected: "the tick's time", actual: deadline))
        }
        if !due, let deadline, deadline <= time {
            throw ReplayFailure(side: side, event: event, time: time, .wrongDeadline(expected: "after the tick, or none", actual: deadline))
        }
    }

    /// The endpoint raised `error`: fine only if the vector ends with exactly that, from this side.
    private mutating func raise(_ error: SessionError, event: Int, time: Instant) throws(ReplayFailure) {
        guard vector.expect == .failure(code: error.code, raisedBy: side) else {
            throw ReplayFailure(side: side, event: event, time: time, .unexpectedError(error.code))
        }
        raised = error.code
    }

    private func involvesEndpoint(_ step: Schedule.Step) -> Bool {
        switch step {
        case .connect, .tick, .cut: true
        case .round(let senderHalf, let receiverHalf):
            (senderHalf + receiverHalf).contains { $0.route.origin == side || $0.route.destination == side }
        }
    }
}

extension WireVector.Expectation {
    /// The side that ends the session with an error, if one does.
    var raisedBy: WireVector.Side? {
        if case .failure(_, let side) = self { return side }
        return nil
    }
}
