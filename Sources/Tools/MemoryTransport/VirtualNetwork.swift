import Pipeline

/// The one deterministic driver for endpoints without a radio: two `DatagramEndpoint`s on a
/// `SimulatedLink` (seeded faults, latency), a virtual clock, and a hook where a relay or an
/// attacker sits. Tests, simulation, attack tables, fuzz targets, benchmarks and the wire-vector
/// recorder all step endpoints through it, so they share one discipline:
///
/// 1. **Round**, at the current time: `a` gives everything it has (`nextDatagram` until nil); each
///    datagram passes the tap and the link, and whatever the link has due is delivered at once.
///    Then `b` does the same. The round moved if anyone sent anything.
/// 2. **Tick**, after a round that moved nothing: the clock jumps to the earliest of the link's
///    next event (a delivery, or a full radio send queue freeing a buffer) and both deadlines; due
///    datagrams are delivered; `a`'s then `b`'s timers run.
///
/// Over a radio with a bounded send queue (`RadioModel.sendQueue`) a round takes from each
/// endpoint only as many datagrams as the link's `room` for that side: the rest stay in the
/// endpoint (back-pressure), to be taken in a later round once air time has freed a buffer.
///
/// On a perfect link (`FaultProfile.perfect`: no faults, no latency) every datagram arrives in
/// the round it was sent: the discipline the wire vectors record.
public struct VirtualNetwork {
    public typealias Side = SimulatedLink.Side

    /// What the network reports to an observer (a log, a counter).
    public enum Event: Sendable, Equatable {
        /// `from` gave this datagram to the network (before the tap).
        case sent(from: Side, [UInt8])
        /// This datagram reached `to` (after the tap and the link).
        case arrived(to: Side, [UInt8])
        /// The clock moved; `due` are the sides whose deadline it reached.
        case tick(due: [Side])
        /// The link was cut: nothing more is delivered on this connection.
        case cut
    }

    public enum RoundResult: Sendable, Equatable {
        case moved, quiet
        /// `cutAfter` datagrams from `a` went out: the rest of the round was not delivered.
        case cut
    }

    public var link: SimulatedLink
    public private(set) var now: Instant
    /// Sees every datagram, with its index per side over the network's life (retransmissions and
    /// every connection included), and returns what goes on the link instead (nil drops it).
    public var tap: ((Side, Int, [UInt8]) -> [UInt8]?)?
    public var observer: ((Instant, Event) -> Void)?
    /// Cut the link once this many datagrams from `a` have gone out on it (`reconnect` resets the count).
    public var cutAfter: Int?
    private var sentOnLink = 0
    private var sent: [Side: Int] = [.a: 0, .b: 0]
    private var bytesSent: [Side: Int] = [.a: 0, .b: 0]
    /// When both endpoints' timers last ran.
    private var timersRan: Instant?

    /// Most datagrams taken from one endpoint in one round when the link sets no limit (a runaway
    /// endpoint beyond that: a window is at most 4096 frames).
    static let drainLimit = 10_000

    public init(link: SimulatedLink, now: Instant = .zero) {
        self.link = link
        self.now = now
    }

    /// The network every simulation uses unless it studies faults or the radio: no loss, no delay.
    public static func perfect(at start: Instant = .zero) -> VirtualNetwork {
        VirtualNetwork(link: SimulatedLink(faults: .perfect, maxDatagramSize: .max, seed: 0), now: start)
    }

    /// A new connection on the same link (after a cut): nothing in flight, counters for `cutAfter` at 0.
    public mutating func reconnect(after delay: Duration = .zero, cutAfter: Int? = nil) {
        link.cut()
        now = now.advanced(by: delay)
        self.cutAfter = cutAfter
        sentOnLink = 0
    }

    /// Which side failed, with its own error.
    public enum Failure<A: Error, B: Error>: Error {
        case a(A)
        case b(B)
    }

    /// In which call the last failure happened.
    public enum Phase: Sendable, Equatable { case sending, receiving, timers }
    public private(set) var failurePhase: Phase?

    /// Step 1 of the discipline. When an endpoint fails, the rest of the round is still reported
    /// to the observer as sent, and nothing more is delivered.
    public mutating func round<A: DatagramEndpoint, B: DatagramEndpoint>(_ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) -> RoundResult {
        var failure: Failure<A.Failure, B.Failure>?
        let fromA = a.drain(now: now, limit: link.room(for: .a, now: now) ?? Self.drainLimit)
        var cut = false
        for datagram in fromA.datagrams {
            sentOnLink += 1
            cut = cut || cutAfter.map { sentOnLink > $0 } ?? false
            do { try pass(datagram, from: .a, delivering: !cut && fromA.error == nil && failure == nil, &a, &b) } catch { failure = error }
        }
        if let failure { throw failure }
        if let error = fromA.error {
            failurePhase = .sending
            throw .a(error)
        }
        cut = cut || cutAfter.map { sentOnLink >= $0 } ?? false
        let fromB = b.drain(now: now, limit: link.room(for: .b, now: now) ?? Self.drainLimit)
        for datagram in fromB.datagrams {
            do { try pass(datagram, from: .b, delivering: !cut && failure == nil, &a, &b) } catch { failure = error }
        }
        if let failure { throw failure }
        if let error = fromB.error {
            failurePhase = .sending
            throw .b(error)
        }
        if cut {
            link.cut()
            observer?(now, .cut)
            return .cut
        }
        return fromA.datagrams.isEmpty && fromB.datagrams.isEmpty ? .quiet : .moved
    }

    /// Step 2 of the discipline. Returns false if nothing is scheduled any more (the clock stays).
    public mutating func tick<A: DatagramEndpoint, B: DatagramEndpoint>(_ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) -> Bool {
        let deadlines = (a: a.nextDeadline, b: b.nextDeadline)
        guard let next = [link.nextEventTime, waiting(deadlines.a), waiting(deadlines.b)].compactMap({ $0 }).min()
        else { return false }
        now = max(now, next)
        observer?(now, .tick(due: [deadlines.a, deadlines.b].enumerated().compactMap { index, deadline in
            deadline.map { $0 <= now } == true ? (index == 0 ? Side.a : Side.b) : nil
        }))
        try deliverDueAndRunTimers(&a, &b)
        return true
    }

    /// Moves the clock by `duration` whatever is scheduled (a caller that plays time itself, like
    /// a fuzz target), delivers what is due, and runs `a`'s then `b`'s timers.
    public mutating func advance<A: DatagramEndpoint, B: DatagramEndpoint>(by duration: Duration, _ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) {
        now = now.advanced(by: duration)
        try deliverDueAndRunTimers(&a, &b)
    }

    /// Datagrams `side` has sent over the network's life.
    public func sentCount(from side: Side) -> Int { sent[side, default: 0] }

    /// Bytes of the datagrams `side` has sent over the network's life (before the tap and the link).
    public func bytesSent(from side: Side) -> Int { bytesSent[side, default: 0] }

    /// How a `run` ended.
    public enum Ending: Sendable, Equatable {
        /// `done` said so.
        case done
        /// Nothing is in flight and nobody has a deadline: nothing will ever happen again.
        case idle
        /// The next thing to happen is past the time limit, or past the quiet limit.
        case timeLimit
        /// `cutAfter` datagrams from `a` went out.
        case cut
    }

    /// What `run` just did, for its `after` hook.
    public enum Step: Sendable, Equatable {
        case round(RoundResult)
        case tick
    }

    /// Rounds and ticks until `done` says so (checked after every round and tick), an endpoint
    /// fails, nothing is left to happen, the next event lies past `limit`, or nothing has moved
    /// for `quietLimit`.
    public mutating func run<A: DatagramEndpoint, B: DatagramEndpoint>(
        _ a: inout A, _ b: inout B, until limit: Instant = .distantFuture, quietLimit: Duration? = nil,
        done: (inout A, inout B) -> Bool = { _, _ in false }
    ) throws(Failure<A.Failure, B.Failure>) -> Ending {
        try run(&a, &b, until: limit, quietLimit: quietLimit) { a, b, _, step in step == .round(.cut) ? false : done(&a, &b) }
    }

    /// The virtual-time pump: the one loop that steps two endpoints for everything without a
    /// radio. Rounds and ticks until `after` (called after every round, a cut one included, and
    /// every tick, with the network itself: a caller may change the link between steps) says to
    /// stop, an endpoint fails, the link is cut, nothing is left to happen, the next event lies
    /// past `limit`, or nothing has moved for `quietLimit`.
    public mutating func run<A: DatagramEndpoint, B: DatagramEndpoint>(
        _ a: inout A, _ b: inout B, until limit: Instant = .distantFuture, quietLimit: Duration? = nil,
        after: (inout A, inout B, inout VirtualNetwork, Step) -> Bool
    ) throws(Failure<A.Failure, B.Failure>) -> Ending {
        var lastMoved = now
        while true {
            let result = try round(&a, &b)
            let stop = after(&a, &b, &self, .round(result))
            if result == .cut { return .cut }
            if stop { return .done }
            if result == .moved {
                lastMoved = now
                continue
            }
            guard let next = nextTime(a, b) else { return .idle }
            if next > limit { return .timeLimit }
            if let quietLimit, next.duration(since: lastMoved) > quietLimit { return .timeLimit }
            _ = try tick(&a, &b)
            if after(&a, &b, &self, .tick) { return .done }
        }
    }

    /// When the next tick would move the clock to, if anything is scheduled.
    public func nextTime<A: DatagramEndpoint, B: DatagramEndpoint>(_ a: A, _ b: B) -> Instant? {
        [link.nextEventTime, waiting(a.nextDeadline), waiting(b.nextDeadline)].compactMap { $0 }.min()
    }

    /// A deadline the clock still has to reach. Under back-pressure an endpoint whose timers
    /// already ran at or after its deadline is waiting to send (an ack it owes, a retransmission)
    /// and the link has no room: the link's next event (a buffer freed) wakes it, not its deadline,
    /// or the clock would stand still. Without back-pressure every deadline counts, as always.
    private func waiting(_ deadline: Instant?) -> Instant? {
        guard let deadline else { return nil }
        if link.appliesBackPressure, let timersRan, deadline <= timersRan { return nil }
        return deadline
    }

    // MARK: - Steps

    private mutating func pass<A: DatagramEndpoint, B: DatagramEndpoint>(
        _ datagram: [UInt8], from side: Side, delivering: Bool, _ a: inout A, _ b: inout B
    ) throws(Failure<A.Failure, B.Failure>) {
        let index = sent[side, default: 0]
        sent[side] = index + 1
        bytesSent[side, default: 0] += datagram.count
        observer?(now, .sent(from: side, datagram))
        guard delivering, let onAir = tap.map({ $0(side, index, datagram) }) ?? datagram else { return }
        if link.faults == .perfect, link.radio == nil, link.inFlightCount == 0 {
            // Nothing can happen to it on the way: hand it over (the hot path of the benchmarks).
            try arrive(onAir, at: side.peer, &a, &b)
            return
        }
        link.transmit(onAir, from: side, now: now)
        try deliverDue(&a, &b)
    }

    /// What a tick does once the clock has moved: due datagrams arrive, then `a`'s and `b`'s timers run.
    private mutating func deliverDueAndRunTimers<A: DatagramEndpoint, B: DatagramEndpoint>(_ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) {
        try deliverDue(&a, &b)
        failurePhase = .timers
        timersRan = now
        do { try a.handleTimers(now: now) } catch { throw .a(error) }
        do { try b.handleTimers(now: now) } catch { throw .b(error) }
        failurePhase = nil
    }

    private mutating func deliverDue<A: DatagramEndpoint, B: DatagramEndpoint>(_ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) {
        for (to, datagram) in link.deliver(now: now) { try arrive(datagram, at: to, &a, &b) }
    }

    private mutating func arrive<A: DatagramEndpoint, B: DatagramEndpoint>(_ datagram: [UInt8], at side: Side, _ a: inout A, _ b: inout B)
        throws(Failure<A.Failure, B.Failure>) {
        observer?(now, .arrived(to: side, datagram))
        failurePhase = .receiving
        if side == .a {
            do { try a.receive(datagram: datagram, now: now) } catch { throw .a(error) }
        } else {
            do { try b.receive(datagram: datagram, now: now) } catch { throw .b(error) }
        }
        failurePhase = nil
    }
}
