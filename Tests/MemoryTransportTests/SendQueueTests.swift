import MemoryTransport
import Pipeline
import Testing

/// The bounded send queue in front of the modelled air (`SendQueue`), against cases worked out by
/// hand. LE 1M, DLE 251, CI 7.5 ms: a 244-byte GATT datagram is one 251-byte packet (2088 µs); an
/// exchange of it and an empty answer is 2088 + 150 + 80 + 150 = 2468 µs; three fit in an event.
@Suite struct SendQueueTests {
    static func µs(_ x: Int64) -> Instant { Instant(nanoseconds: UInt64(x * 1000)) }
    static let model = RadioModel(phy: .le1M, connectionInterval: .microseconds(7500), sendQueue: SendQueue(buffers: 3))

    @Test func aQueueOfNAcceptsNAndRefusesMoreUntilAPacketHasEnded() {
        var s = RadioScheduler<Int>(model: Self.model)
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 244) == 3)
        for i in 0..<3 { s.enqueue(i, size: 244, direction: .fromCentral, now: .zero) }
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 244) == 0)
        #expect(s.isFull(.fromCentral) && !s.isFull(.fromPeripheral))
        #expect(s.room(in: .fromPeripheral, now: .zero, datagramSize: 244) == 3)   // each direction has its own
        // The first packet ends at 2088 µs: one buffer frees then, not before.
        #expect(s.nextRelease(in: .fromCentral) == Self.µs(2088))
        #expect(s.room(in: .fromCentral, now: Self.µs(2087), datagramSize: 244) == 0)
        #expect(s.room(in: .fromCentral, now: Self.µs(2088), datagramSize: 244) == 1)
        s.enqueue(3, size: 244, direction: .fromCentral, now: Self.µs(2088))
        #expect(s.room(in: .fromCentral, now: Self.µs(2088), datagramSize: 244) == 0)
        // The second packet (exchange 2 starts at 2468) ends at 4556.
        #expect(s.nextRelease(in: .fromCentral) == Self.µs(2468 + 2088))
        // Delivery: three exchanges in the first event; the fourth datagram, in the queue since
        // 2088 µs, waits for the next anchor (7404 + 2468 > 7500).
        s.advance(to: Self.µs(20_000))
        let out = s.takeArrivals(through: Self.µs(20_000))
        #expect(out.map(\.item) == [0, 1, 2, 3])
        let expected: [Int64] = [2088, 2468 + 2088, 2 * 2468 + 2088, 7500 + 2088]
        #expect(out.map(\.due) == expected.map(Self.µs))
        #expect(s.occupancy(.fromCentral) == 0 && s.nextRelease(in: .fromCentral) == nil)
    }

    @Test func buffersArePacketsAndOneMoreDatagramGoesInWhileAnyIsFree() {
        // 510 bytes: packets of 251, 251 and 15 (200 µs). Four buffers take two such datagrams
        // (⌈4 / 3⌉): 6 packets, over the limit, as a socket below its limit takes one more write.
        var s = RadioScheduler<Int>(model: RadioModel(phy: .le1M, connectionInterval: .microseconds(7500),
                                                      sendQueue: SendQueue(buffers: 4)))
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 510) == 2)
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 244) == 4)
        s.enqueue(0, size: 510, direction: .fromCentral, now: .zero)
        s.enqueue(1, size: 510, direction: .fromCentral, now: .zero)
        #expect(s.occupancy(.fromCentral) == 6)
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 510) == 0)
        // Packets end at 2088, 4556 and 4936 + 200 = 5136: the third end leaves 3 of 4 buffers held.
        #expect(s.room(in: .fromCentral, now: Self.µs(4556), datagramSize: 510) == 0)
        #expect(s.occupancy(.fromCentral) == 4)
        #expect(s.room(in: .fromCentral, now: Self.µs(5135), datagramSize: 510) == 0)
        #expect(s.room(in: .fromCentral, now: Self.µs(5136), datagramSize: 510) == 1)
        #expect(s.takeArrivals(through: Self.µs(5136)).map(\.due) == [Self.µs(5136)])
    }

    @Test func withoutABoundTheSchedulerAcceptsEverything() {
        var s = RadioScheduler<Int>(model: RadioModel(sendQueue: nil))
        for i in 0..<100 { s.enqueue(i, size: 244, direction: .fromCentral, now: .zero) }
        #expect(s.room(in: .fromCentral, now: .zero, datagramSize: 244) == nil)
        #expect(!s.isFull(.fromCentral))
    }

    @Test func theLinkSaysWhenAFullQueueFreesABuffer() {
        var plain = SimulatedLink(faults: .clean, maxDatagramSize: 244, seed: 1)
        #expect(plain.room(for: .a, now: .zero) == nil && !plain.appliesBackPressure)
        var unbounded = SimulatedLink(faults: .perfect, maxDatagramSize: 244, seed: 1, radio: RadioModel(sendQueue: nil))
        #expect(unbounded.room(for: .a, now: .zero) == nil && !unbounded.appliesBackPressure)

        // 1 ms of host latency: deliveries come 1 ms after the packet ends, the freed buffer at once.
        var link = SimulatedLink(faults: FaultProfile(latency: .milliseconds(1)), maxDatagramSize: 244, seed: 1, radio: Self.model)
        #expect(link.appliesBackPressure)
        #expect(link.room(for: .a, now: .zero) == 3 && link.room(for: .b, now: .zero) == 3)
        for i in 0..<3 { link.transmit([UInt8](repeating: UInt8(i), count: 244), from: .a, now: .zero) }
        #expect(link.room(for: .a, now: .zero) == 0)
        #expect(link.nextDeliveryTime == Self.µs(2088 + 1000))
        #expect(link.nextEventTime == Self.µs(2088))
        #expect(link.room(for: .a, now: Self.µs(2088)) == 1)
        // Not full any more: the next event is the delivery.
        #expect(link.nextEventTime == Self.µs(2088 + 1000))
        link.cut()
        #expect(link.room(for: .a, now: Self.µs(2088)) == 3 && link.nextEventTime == nil)
    }

    /// A sender with a burst to send that stamps each datagram when the network takes it, and owes
    /// "send now" (a deadline in the past) while it holds any, as an endpoint with an ack due does.
    struct Burst: DatagramEndpoint {
        typealias Failure = Never
        var left: [[UInt8]]
        var taken: [Instant] = []
        var received: [Instant] = []
        var timerRuns = 0

        mutating func nextDatagram(now: Instant) -> [UInt8]? {
            guard !left.isEmpty else { return nil }
            taken.append(now)
            return left.removeFirst()
        }
        mutating func receive(datagram: [UInt8], now: Instant) { received.append(now) }
        mutating func handleTimers(now: Instant) { timerRuns += 1 }
        var nextDeadline: Instant? { left.isEmpty ? nil : .zero }
    }

    static func burst(queue: SendQueue?) throws -> (a: Burst, b: Burst, ending: VirtualNetwork.Ending) {
        var model = model
        model.sendQueue = queue
        var network = VirtualNetwork(link: SimulatedLink(faults: .perfect, maxDatagramSize: 244, seed: 1, radio: model))
        var a = Burst(left: (0..<5).map { [UInt8](repeating: UInt8($0), count: 244) })
        var b = Burst(left: [])
        let ending = try network.run(&a, &b, until: µs(1_000_000)) { _, b in b.received.count == 5 }
        return (a, b, ending)
    }

    @Test(.timeLimit(.minutes(1)))
    func theNetworkTakesOnlyWhatTheQueueHoldsAndStampsDatagramsWhenTheyEnterIt() throws {
        // Two buffers: datagrams 0 and 1 at once; each next one when a packet ends (2088, 4556,
        // 7024); arrivals as on an unbounded queue: three exchanges in the first event, then the
        // anchor at 7500 (9588) and one exchange later (9968 + 2088).
        let bounded = try Self.burst(queue: SendQueue(buffers: 2))
        #expect(bounded.ending == .done)
        let taken: [Int64] = [0, 0, 2088, 2468 + 2088, 2 * 2468 + 2088]
        #expect(bounded.a.taken == taken.map(Self.µs))
        let arrived: [Int64] = [2088, 2468 + 2088, 2 * 2468 + 2088, 7500 + 2088, 7500 + 2468 + 2088]
        #expect(bounded.b.received == arrived.map(Self.µs))
        // The sender's "send now" deadline did not make the clock stand still while it waited:
        // one tick for it at 0, then one per freed buffer or delivery (2088, 4556, 7024, 9588, 12056).
        #expect(bounded.a.timerRuns == 6)

        // Unbounded: the same air, but the whole burst is taken (and stamped) at 0.
        let unbounded = try Self.burst(queue: nil)
        #expect(unbounded.ending == .done)
        #expect(unbounded.a.taken == Array(repeating: .zero, count: 5))
        #expect(unbounded.b.received == arrived.map(Self.µs))
    }
}
