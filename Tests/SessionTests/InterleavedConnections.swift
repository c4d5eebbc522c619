import Keys
import Pipeline
import Session
import Testing

/// One sender and the receiver session serving it, on a perfect in-memory link that moves one
/// datagram each way per `step`: several of them, stepped in turn on one clock, are a receiver
/// serving several connections at once, interleaved datagram by datagram, as one pump would.
struct InterleavedConnection {
    var sender: SenderSession
    var receiver: ReceiverSession
    var senderEvents: [SenderSession.Event] = []
    var receiverEvents: [ReceiverSession.Event] = []
    var senderError: SessionError?
    var receiverError: SessionError?
    /// Datagrams the sender produced that go to the receiver, oldest first (and back).
    private var toReceiver: [[UInt8]] = []
    private var toSender: [[UInt8]] = []

    static let datagramSize = 244
    static func wallClock(_ now: Instant) -> UInt64 { 1_763_000_000_000_000_000 + now.nanoseconds }

    /// Connects both ends at `now` (the receiver accepts, the sender starts its handshake).
    init(sender: SenderSession, receiver: ReceiverSession, now: Instant) throws {
        self.sender = sender
        self.receiver = receiver
        try self.receiver.accept(maxDatagramSize: Self.datagramSize, now: now, wallClock: Self.wallClock(now))
        try self.sender.connect(maxDatagramSize: Self.datagramSize, now: now, wallClock: Self.wallClock(now),
                                receiverExtensions: receiver.extensions)
    }

    var failed: Bool { senderError != nil || receiverError != nil }
    /// Both ends are through: the sender has its goodbye and the receiver's connection is complete.
    var isDone: Bool { sender.isFinished && receiver.connectionComplete }
    var nextDeadline: Instant? { [sender.nextDeadline, receiver.nextDeadline].compactMap { $0 }.min() }

    /// Moves at most one datagram from the sender to the receiver and one back; returns whether
    /// any moved. A side that fails keeps its error and the connection stops.
    @discardableResult
    mutating func step(now: Instant) -> Bool {
        guard !failed else { return false }
        var moved = false
        do {
            if toReceiver.isEmpty, let datagram = try sender.nextDatagram(now: now) { toReceiver.append(datagram) }
        } catch { senderError = error }
        if !failed, !toReceiver.isEmpty {
            moved = true
            do { try receiver.receive(datagram: toReceiver.removeFirst(), now: now) } catch { receiverError = error }
        }
        if !failed, toSender.isEmpty, let datagram = receiver.nextDatagram(now: now) { toSender.append(datagram) }
        if !failed, !toSender.isEmpty {
            moved = true
            do { try sender.receive(datagram: toSender.removeFirst(), now: now) } catch { senderError = error }
        }
        collectEvents()
        return moved
    }

    /// Runs whichever timers are due at `now`.
    mutating func handleTimers(now: Instant) {
        guard !failed else { return }
        do { if sender.nextDeadline.map({ $0 <= now }) == true { try sender.handleTimers(now: now) } } catch { senderError = error }
        do { if receiver.nextDeadline.map({ $0 <= now }) == true { try receiver.handleTimers(now: now) } } catch { receiverError = error }
        collectEvents()
    }

    /// Takes the sender's next datagrams without delivering them (in flight when its link dies).
    mutating func withhold(upTo count: Int, now: Instant) throws -> [[UInt8]] {
        var held = toReceiver
        toReceiver.removeAll()
        while held.count < count, let datagram = try sender.nextDatagram(now: now) { held.append(datagram) }
        return held
    }

    /// The link went: both ends hear of it (the receiver's lost link runs its expiry at `now`).
    mutating func end(now: Instant) {
        sender.linkLost()
        receiver.linkLost(now: now)
        collectEvents()
    }

    mutating func collectEvents() {
        senderEvents += sender.takeEvents()
        receiverEvents += receiver.takeEvents()
    }

    /// What the sender learnt its files were stored as, in order.
    var storedNames: [String] {
        senderEvents.compactMap { event in
            if case .transfer(.fileSaved(_, let stored, _, _, _)) = event { return stored }
            return nil
        }
    }

    /// The offsets the sender's files started at (above zero: a resume).
    var startOffsets: [UInt64] {
        senderEvents.compactMap { event in
            if case .transfer(.fileStarted(_, _, _, let at)) = event { return at }
            return nil
        }
    }
}

/// Steps `connections` in turn, one datagram each way per connection per round, 1 ms of virtual
/// time per round; when no connection moves, the clock jumps to the next deadline. Stops when
/// `until` holds (checked after every round), or every connection is done or failed. Returns the
/// time it stopped at.
@discardableResult
func interleave(_ connections: inout [InterleavedConnection], from start: Instant, limit: Duration = .seconds(600),
                until: ([InterleavedConnection]) -> Bool = { _ in false }) -> Instant {
    var now = start
    let end = start.advanced(by: limit)
    while now < end {
        var moved = false
        for index in connections.indices where !connections[index].isDone {
            moved = connections[index].step(now: now) || moved
        }
        for index in connections.indices where !connections[index].isDone { connections[index].handleTimers(now: now) }
        if until(connections) || connections.allSatisfy({ $0.isDone || $0.failed }) { return now }
        if moved {
            now = now.advanced(by: .milliseconds(1))
        } else {
            let next = connections.filter { !$0.isDone && !$0.failed }.compactMap(\.nextDeadline).min()
            guard let next else { return now }
            now = max(now.advanced(by: .milliseconds(1)), next)
        }
    }
    Issue.record("the connections did not finish in \(limit)")
    return now
}
