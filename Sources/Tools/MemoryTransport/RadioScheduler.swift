import DequeModule
import Pipeline

/// One BLE connection's air, scheduled per connection event under a `RadioModel`: when does each
/// datagram arrive, given what is queued ahead of it in both directions.
///
/// Deterministic and causal: datagrams are enqueued at the current time (never earlier than the
/// last call), and `advance(to:)` fixes only the exchanges that began before that time, so a
/// datagram enqueued later never changes what already went on air.
///
/// Connection events (Core Spec Vol 6 Part B §4.5):
/// - Events start at anchors `k × connectionInterval` (k ≥ 0) from the scheduler's origin.
/// - An event is used only if some datagram is queued, by the anchor, in a direction that is
///   under its packet cap; otherwise nothing of it matters here.
/// - An event is a series of exchanges: the central sends a packet, T_IFS, the peripheral
///   answers, T_IFS. A side with nothing to send (or at its per-event cap) sends an empty packet.
/// - A packet carries the head datagram of its direction only if that datagram was queued by the
///   exchange's start (the controller has it).
/// - The event goes on while either side has a queued packet under its cap, and while the next
///   whole exchange (both packets and both T_IFS) still ends within the interval; then the next
///   event starts at the next anchor.
/// - A datagram arrives when its last packet has been received: the end of that packet on air.
///
/// The queue in front of the air (`RadioModel.sendQueue`, see `SendQueue`), counted in LL
/// packets (the controller's ACL buffers): each packet of a datagram holds a buffer from `enqueue`
/// until it has ended on air. `room(in:now:datagramSize:)` says how many datagrams the stack
/// accepts now; `nextRelease(in:)` when a buffer frees. The scheduler does not refuse an
/// `enqueue` itself: the caller asks first (a duplicate from a fault profile may overfill it).
public struct RadioScheduler<Item> {
    public enum Direction: Int, Sendable, CaseIterable {
        case fromCentral = 0, fromPeripheral = 1
    }

    private struct Entry {
        var ready: Int64
        var packets: [Int]
        var item: Item
    }

    private struct Cursor {
        var anchor: Int64 = 0
        var offset: Int64 = 0
        var open = false
        /// Data packets sent in this event, per direction.
        var sent = SIMD2<Int>(0, 0)
        /// Index of the head entry not yet complete, per direction.
        var index = SIMD2<Int>(0, 0)
        /// Packets of that head already on air.
        var packet = SIMD2<Int>(0, 0)
    }

    private struct Exchange {
        var start: Int64
        /// When the head datagram of a direction completed in this exchange, or -1.
        var done = SIMD2<Int64>(-1, -1)
        /// When the data packet of a direction ended in this exchange, or -1 (none or empty).
        var packetEnd = SIMD2<Int64>(-1, -1)
    }

    public let model: RadioModel
    private let interval: Int64
    private let caps: SIMD2<Int>
    private var queues: [Deque<Entry>] = [[], []]
    private var cursor = Cursor()
    private var arrivals: Deque<(due: Int64, item: Item)> = []
    private var lastEnqueue: Int64 = 0
    /// The time of the last `advance(to:)`: buffers are counted as of then.
    private var advancedTo: Int64 = 0
    /// Packets queued and not yet on air (in fixed exchanges), per direction.
    private var unsent = SIMD2<Int>(0, 0)
    /// Ends of packets on air (fixed) that had not ended by `advancedTo`, per direction, in order.
    private var onAir: [Deque<Int64>] = [[], []]

    public init(model: RadioModel) {
        self.model = model
        interval = model.connectionInterval.nanoseconds
        precondition(interval > 0, "connection interval must be positive")
        caps = SIMD2(max(1, model.maxPacketsPerEventFromCentral ?? .max),
                     max(1, model.maxPacketsPerEventFromPeripheral ?? .max))
    }

    /// Items queued or on air, not yet handed out by `takeArrivals`.
    public var count: Int { queues[0].count + queues[1].count + arrivals.count }

    /// Queues `item`, a datagram of `size` bytes, in `direction` at `now` (after everything queued
    /// before it in that direction).
    public mutating func enqueue(_ item: Item, size: Int, direction: Direction, now: Instant) {
        let ready = max(Int64(clamping: now.nanoseconds), lastEnqueue)
        lastEnqueue = ready
        let packets = model.packets(forDatagram: size)
        unsent[direction.rawValue] += packets.count
        queues[direction.rawValue].append(Entry(ready: ready, packets: packets, item: item))
    }

    /// Fixes every exchange that starts before `now`.
    public mutating func advance(to now: Instant) {
        let limit = Int64(clamping: now.nanoseconds)
        advancedTo = max(advancedTo, limit)
        defer {
            for d in 0..<2 {
                while let end = onAir[d].first, end <= advancedTo { onAir[d].removeFirst() }
            }
        }
        while true {
            var next = cursor
            guard let exchange = nextExchange(&next), exchange.start < limit else { return }
            cursor = next
            for d in 0..<2 where exchange.packetEnd[d] >= 0 {
                unsent[d] -= 1
                onAir[d].append(exchange.packetEnd[d])
            }
            for d in 0..<2 where exchange.done[d] >= 0 {
                let entry = queues[d].removeFirst()
                cursor.index[d] -= 1
                arrivals.append((due: exchange.done[d], item: entry.item))
            }
        }
    }

    /// LL packets of `direction` holding a buffer as of the last `advance(to:)`: queued, or on
    /// air and not yet ended.
    public func occupancy(_ direction: Direction) -> Int {
        unsent[direction.rawValue] + onAir[direction.rawValue].count
    }

    /// Whether `direction`'s queue is full (bounded, and no buffer free) as of the last `advance(to:)`.
    public func isFull(_ direction: Direction) -> Bool {
        model.sendQueue.map { occupancy(direction) >= $0.buffers } ?? false
    }

    /// How many datagrams of at most `datagramSize` bytes `direction` accepts at `now` (after
    /// advancing to it): as long as a buffer is free the stack takes one more datagram, whatever
    /// its packet count (a socket takes a write while it is below its limit). So with `free`
    /// buffers and datagrams of `p` packets, ⌈free / p⌉. Nil if the model's queue is unbounded.
    public mutating func room(in direction: Direction, now: Instant, datagramSize: Int) -> Int? {
        guard let limit = model.sendQueue?.buffers else { return nil }
        advance(to: now)
        let free = limit - occupancy(direction)
        guard free > 0 else { return 0 }
        let each = max(1, model.packetCount(forDatagram: datagramSize))
        return (free + each - 1) / each
    }

    /// When `direction`'s next buffer frees (its oldest packet on air ends), after the last
    /// `advance(to:)`, if nothing more is queued before then; nil if it holds nothing.
    public func nextRelease(in direction: Direction) -> Instant? {
        let d = direction.rawValue
        if let first = onAir[d].first { return Instant(nanoseconds: UInt64(first)) }
        var next = cursor
        while let exchange = nextExchange(&next) {
            if exchange.packetEnd[d] >= 0 { return Instant(nanoseconds: UInt64(exchange.packetEnd[d])) }
        }
        return nil
    }

    /// When the next datagram arrives if nothing more is queued before then, if anything is queued.
    public var nextArrival: Instant? {
        if let first = arrivals.first { return Instant(nanoseconds: UInt64(first.due)) }
        var next = cursor
        while let exchange = nextExchange(&next) {
            let done = exchange.done
            if done[0] >= 0 { return Instant(nanoseconds: UInt64(done[0])) }
            if done[1] >= 0 { return Instant(nanoseconds: UInt64(done[1])) }
        }
        return nil
    }

    /// Takes the arrivals due by `now` (after `advance(to:)`), in arrival order.
    public mutating func takeArrivals(through now: Instant) -> [(due: Instant, item: Item)] {
        let limit = Int64(clamping: now.nanoseconds)
        var out: [(due: Instant, item: Item)] = []
        while let first = arrivals.first, first.due <= limit {
            arrivals.removeFirst()
            out.append((due: Instant(nanoseconds: UInt64(first.due)), item: first.item))
        }
        return out
    }

    /// The connection drops: everything queued or on air is lost.
    public mutating func removeAll() {
        queues = [[], []]
        unsent = .zero
        onAir = [[], []]
        arrivals.removeAll()
        cursor = Cursor(anchor: cursor.anchor)
    }

    /// Time for `count` datagrams of `size` bytes, all queued at time 0 in `direction` with nothing
    /// the other way, to arrive: the raw limit of the link.
    public static func streamTime(model: RadioModel, datagramSize size: Int, count: Int,
                                  direction: RadioScheduler<Int>.Direction = .fromCentral) -> Duration {
        var scheduler = RadioScheduler<Int>(model: model)
        for i in 0..<count { scheduler.enqueue(i, size: size, direction: direction, now: .zero) }
        var last = Instant.zero
        var taken = 0
        while taken < count, let next = scheduler.nextArrival {
            scheduler.advance(to: next)
            let due = scheduler.takeArrivals(through: next)
            taken += due.count
            if let end = due.last?.due { last = end }
        }
        return .nanoseconds(Int64(last.nanoseconds))
    }

    // MARK: - The schedule

    /// The next exchange that carries data from `c`, with `c` moved past it; nil if nothing is queued.
    private func nextExchange(_ c: inout Cursor) -> Exchange? {
        let ifs = RadioModel.interFrameSpace
        while true {
            if !c.open {
                var earliest = Int64.max
                for d in 0..<2 where c.index[d] < queues[d].count {
                    earliest = min(earliest, queues[d][c.index[d]].ready)
                }
                guard earliest != .max else { return nil }
                let anchor = (earliest + interval - 1) / interval * interval
                c.anchor = max(c.anchor, anchor)
                c.open = true
                c.offset = 0
                c.sent = .zero
            }
            let start = c.anchor + c.offset
            var payload = SIMD2<Int>(-1, -1)
            for d in 0..<2 where c.index[d] < queues[d].count && c.sent[d] < caps[d] {
                let head = queues[d][c.index[d]]
                if head.ready <= start { payload[d] = head.packets[c.packet[d]] }
            }
            let central = model.packetAirTime(payload: max(0, payload[0]))
            let peripheral = model.packetAirTime(payload: max(0, payload[1]))
            let length = central + ifs + peripheral + ifs
            if payload == SIMD2(-1, -1) || (c.offset > 0 && c.offset + length > interval) {
                c.open = false
                c.anchor += interval
                continue
            }
            var exchange = Exchange(start: start)
            for d in 0..<2 where payload[d] >= 0 {
                c.sent[d] += 1
                c.packet[d] += 1
                exchange.packetEnd[d] = d == 0 ? start + central : start + central + ifs + peripheral
                if c.packet[d] == queues[d][c.index[d]].packets.count {
                    exchange.done[d] = exchange.packetEnd[d]
                    c.index[d] += 1
                    c.packet[d] = 0
                }
            }
            c.offset += length
            return exchange
        }
    }
}
