import Pipeline

/// A deterministic two-way datagram link with a virtual clock, for tests and benchmarks.
///
/// Nothing happens on its own: `transmit` schedules a datagram (after faults from the seeded RNG),
/// `deliver(now:)` hands back everything due by `now`, in due order (ties in transmit order).
/// Without a radio model bandwidth is unlimited; only latency, jitter and the faults shape delivery.
/// With one (`radio`), every datagram goes on air through a `RadioScheduler`: it arrives when its
/// last link-layer packet has been received, plus `faults.latency` (host latency); loss,
/// duplication and corruption still apply at `transmit` (a lost datagram never goes on air), while
/// `jitter` and `reordering` do not (the link layer is first-in first-out). If the radio's
/// `sendQueue` is bounded, `room(for:now:)` says how many datagrams a side's stack accepts now
/// (back-pressure: the driver takes no more than that from the endpoint), and `nextEventTime`
/// includes the moment a full queue frees a buffer.
public struct SimulatedLink {
    public enum Side: Sendable, Hashable, CaseIterable {
        case a, b
        public var peer: Side { self == .a ? .b : .a }
    }

    public struct Counters: Sendable, Equatable {
        public var datagramsTransmitted = 0
        public var bytesTransmitted = 0
        public var dropped = 0
        public var duplicated = 0
        public var reordered = 0
        public var corrupted = 0
        /// Larger than `maxDatagramSize` when transmitted: dropped.
        public var oversize = 0
        public var delivered = 0
        public init() {}
    }

    private struct InFlight {
        var due: Instant
        var order: Int
        var to: Side
        var datagram: [UInt8]
    }

    public var faults: FaultProfile
    /// Datagrams longer than this are dropped (and counted) at `transmit`.
    public var maxDatagramSize: Int
    public private(set) var random: SeededRandom
    /// Counters per sending side.
    public private(set) var counters: [Side: Counters] = [.a: Counters(), .b: Counters()]

    private var inFlight: [InFlight] = []
    private var order = 0
    private var lastDue: [Side: Instant] = [:]

    /// The air the datagrams cross, if modelled (nil: unlimited bandwidth).
    public let radio: RadioModel?
    /// The side that is the link layer's central (the sender, as blesend connects).
    public let central: Side
    private var scheduler: RadioScheduler<InFlight>?

    public init(faults: FaultProfile = .clean, maxDatagramSize: Int, seed: UInt64,
                radio: RadioModel? = nil, central: Side = .a) {
        self.faults = faults
        self.maxDatagramSize = maxDatagramSize
        self.random = SeededRandom(seed: seed)
        self.radio = radio
        self.central = central
        self.scheduler = radio.map { RadioScheduler(model: $0) }
    }

    /// Bytes transmitted by `side` (every datagram handed to `transmit`, delivered or not).
    public func bytesTransmitted(from side: Side) -> Int { counters[side]?.bytesTransmitted ?? 0 }

    /// Datagrams on their way.
    public var inFlightCount: Int { inFlight.count + (scheduler?.count ?? 0) }

    /// How many datagrams `side` may transmit at `now` (the room in its stack's queue in front of
    /// the air); nil: no limit (no radio, or an unbounded queue).
    public mutating func room(for side: Side, now: Instant) -> Int? {
        let direction = direction(from: side)
        // No ATT value or L2CAP SDU is larger than 65535 bytes.
        let size = min(maxDatagramSize, 65_535)
        return scheduler?.room(in: direction, now: now, datagramSize: size)
    }

    /// Whether a side's stack can refuse datagrams (a radio with a bounded `sendQueue`).
    public var appliesBackPressure: Bool { radio?.sendQueue != nil }

    /// When something next happens on the link: a delivery, or a full send queue freeing a buffer
    /// (so the driver can hand it the next datagram). Without a bounded queue: `nextDeliveryTime`.
    public var nextEventTime: Instant? {
        guard let scheduler, scheduler.model.sendQueue != nil else { return nextDeliveryTime }
        var next = nextDeliveryTime
        for side in Side.allCases where scheduler.isFull(direction(from: side)) {
            if let release = scheduler.nextRelease(in: direction(from: side)) { next = min(next ?? release, release) }
        }
        return next
    }

    private func direction(from side: Side) -> RadioScheduler<InFlight>.Direction {
        side == central ? .fromCentral : .fromPeripheral
    }

    public mutating func transmit(_ datagram: [UInt8], from side: Side, now: Instant) {
        counters[side, default: Counters()].datagramsTransmitted += 1
        counters[side, default: Counters()].bytesTransmitted += datagram.count
        guard datagram.count <= maxDatagramSize else {
            counters[side, default: Counters()].oversize += 1
            return
        }
        if random.chance(faults.loss) {
            counters[side, default: Counters()].dropped += 1
            return
        }
        let copies = random.chance(faults.duplication) ? 2 : 1
        if copies == 2 { counters[side, default: Counters()].duplicated += 1 }
        for _ in 0..<copies {
            var bytes = datagram
            if !bytes.isEmpty, random.chance(faults.corruption) {
                let bit = Int(random.next() % UInt64(bytes.count * 8))
                bytes[bit / 8] ^= 1 << UInt8(bit % 8)
                counters[side, default: Counters()].corrupted += 1
            }
            if scheduler != nil {
                let direction = direction(from: side)
                scheduler!.enqueue(InFlight(due: now, order: order, to: side.peer, datagram: bytes), size: bytes.count,
                                   direction: direction, now: now)
                order += 1
                continue
            }
            var due = now.advanced(by: faults.latency + randomDuration(upTo: faults.jitter))
            if random.chance(faults.reordering) {
                due = due.advanced(by: randomDuration(upTo: faults.reorderDelay))
                counters[side, default: Counters()].reordered += 1
            } else {
                // Jitter alone keeps a direction first-in first-out, as a BLE link does.
                due = max(due, lastDue[side.peer] ?? .zero)
                lastDue[side.peer] = due
            }
            inFlight.append(InFlight(due: due, order: order, to: side.peer, datagram: bytes))
            order += 1
        }
    }

    /// When the next datagram arrives, if any is in flight.
    public var nextDeliveryTime: Instant? {
        if let scheduler { return scheduler.nextArrival?.advanced(by: faults.latency) }
        return inFlight.min(by: { $0.due < $1.due })?.due
    }

    /// Everything due by `now`, in arrival order.
    public mutating func deliver(now: Instant) -> [(to: Side, datagram: [UInt8])] {
        if scheduler != nil {
            scheduler!.advance(to: now)
            let due = scheduler!.takeArrivals(through: now.advanced(by: .zero - faults.latency))
            for arrival in due { counters[arrival.item.to.peer, default: Counters()].delivered += 1 }
            return due.map { (to: $0.item.to, datagram: $0.item.datagram) }
        }
        var due: [InFlight] = []
        inFlight.removeAll { item in
            guard item.due <= now else { return false }
            due.append(item)
            return true
        }
        due.sort { ($0.due, $0.order) < ($1.due, $1.order) }
        for item in due { counters[item.to.peer, default: Counters()].delivered += 1 }
        return due.map { (to: $0.to, datagram: $0.datagram) }
    }

    /// The connection drops: everything in flight is lost. The link stays usable (a reconnect).
    public mutating func cut() {
        inFlight.removeAll()
        scheduler?.removeAll()
    }

    private mutating func randomDuration(upTo limit: Duration) -> Duration {
        let nanos = limit.nanoseconds
        guard nanos > 0 else { return .zero }
        return .nanoseconds(Int64(random.next() % UInt64(nanos + 1)))
    }
}
