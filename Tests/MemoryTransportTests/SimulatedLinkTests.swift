import MemoryTransport
import Pipeline
import Testing

@Suite struct SimulatedLinkTests {
    @Test func seededRandomIsReproducible() {
        var a = SeededRandom(seed: 42), b = SeededRandom(seed: 42), c = SeededRandom(seed: 43)
        let x = (0..<100).map { _ in a.next() }
        #expect(x == (0..<100).map { _ in b.next() })
        #expect(x != (0..<100).map { _ in c.next() })
        #expect(Set(x).count == 100)
    }

    @Test func chanceMatchesProbability() {
        var r = SeededRandom(seed: 1)
        let hits = (0..<100_000).filter { _ in r.chance(0.05) }.count
        #expect(hits > 4_500 && hits < 5_500)
        #expect(!r.chance(0) && r.chance(1))
    }

    @Test func cleanLinkDeliversAfterLatencyInOrder() {
        var link = SimulatedLink(faults: .clean, maxDatagramSize: 20, seed: 1)
        let t0 = Instant(nanoseconds: 1000)
        for i in 0..<10 { link.transmit([UInt8(i)], from: .a, now: t0) }
        link.transmit([99], from: .b, now: t0)
        #expect(link.nextDeliveryTime == t0.advanced(by: .milliseconds(10)))
        #expect(link.deliver(now: t0.advanced(by: .milliseconds(9))).isEmpty)
        let out = link.deliver(now: t0.advanced(by: .milliseconds(10)))
        #expect(out.filter { $0.to == .b }.map(\.datagram) == (0..<10).map { [UInt8($0)] })
        #expect(out.filter { $0.to == .a }.map(\.datagram) == [[99]])
        #expect(link.nextDeliveryTime == nil)
        #expect(link.bytesTransmitted(from: .a) == 10 && link.bytesTransmitted(from: .b) == 1)
    }

    @Test func faultsHappenAtRoughlyTheirRates() {
        var link = SimulatedLink(faults: FaultProfile(loss: 0.1, duplication: 0.1, reordering: 0.1, corruption: 0.1),
                                 maxDatagramSize: 100, seed: 9)
        let datagram = [UInt8](repeating: 0, count: 50)
        let t0 = Instant.zero
        for _ in 0..<10_000 { link.transmit(datagram, from: .a, now: t0) }
        let c = link.counters[.a]!
        for n in [c.dropped, c.duplicated, c.reordered, c.corrupted] { #expect(n > 700 && n < 1300) }
        let out = link.deliver(now: t0.advanced(by: .seconds(1)))
        #expect(out.count == 10_000 - c.dropped + c.duplicated)
        let flipped = out.filter { $0.datagram != datagram }
        #expect(flipped.count == c.corrupted)
        #expect(flipped.allSatisfy { $0.datagram.reduce(0) { $0 + $1.nonzeroBitCount } == 1 })
    }

    @Test func oversizeIsDroppedAndCutEmptiesTheLink() {
        var link = SimulatedLink(faults: .clean, maxDatagramSize: 20, seed: 1)
        link.transmit([UInt8](repeating: 1, count: 21), from: .a, now: .zero)
        #expect(link.counters[.a]!.oversize == 1 && link.inFlightCount == 0)
        link.maxDatagramSize = 30
        link.transmit([UInt8](repeating: 1, count: 21), from: .a, now: .zero)
        #expect(link.inFlightCount == 1)
        link.cut()
        #expect(link.inFlightCount == 0 && link.nextDeliveryTime == nil)
    }

    @Test func sameSeedSameRun() {
        func run(_ seed: UInt64) -> [[UInt8]] {
            var link = SimulatedLink(faults: .hostile, maxDatagramSize: 100, seed: seed)
            for i in 0..<500 { link.transmit([UInt8(i & 0xFF), UInt8(i >> 8)], from: .a, now: .zero) }
            return link.deliver(now: Instant(nanoseconds: 10_000_000_000)).map(\.datagram)
        }
        #expect(run(3) == run(3))
        #expect(run(3) != run(4))
    }
}
