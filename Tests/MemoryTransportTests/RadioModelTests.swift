import MemoryTransport
import Pipeline
import Testing

/// The radio model against cases worked out by hand from the Core Spec's packet sizes.
@Suite struct RadioModelTests {
    static func µs(_ x: Int64) -> Instant { Instant(nanoseconds: UInt64(x * 1000)) }

    @Test func packetAirTimes() {
        let m1 = RadioModel(phy: .le1M)
        #expect(m1.packetAirTime(payload: 251) == 2_088_000)   // (1+4+2+251+3) × 8 µs
        #expect(m1.packetAirTime(payload: 0) == 80_000)        // empty packet
        #expect(m1.packetAirTime(payload: 27) == 296_000)
        let m2 = RadioModel(phy: .le2M)
        #expect(m2.packetAirTime(payload: 251) == 1_048_000)   // (2+4+2+251+3) × 4 µs
        #expect(m2.packetAirTime(payload: 0) == 44_000)
    }

    @Test func gattSegmentation() {
        // 244-byte ATT value + 3 ATT + 4 L2CAP = 251: one full LL packet with DLE.
        #expect(RadioModel(dataLength: 251).packets(forDatagram: 244) == [251])
        #expect(RadioModel(dataLength: 251).airTime(forDatagram: 244) == 2_088_000)
        // Without DLE: ceil(251 / 27) = 10 packets.
        #expect(RadioModel(dataLength: 27).packets(forDatagram: 244) == Array(repeating: 27, count: 9) + [8])
        // 510 needs three packets, 495 two.
        #expect(RadioModel(dataLength: 251).packets(forDatagram: 510) == [251, 251, 15])
        #expect(RadioModel(dataLength: 251).packets(forDatagram: 495) == [251, 251])
        #expect(RadioModel(dataLength: 251).packets(forDatagram: 0) == [7])
    }

    @Test func l2capSegmentation() {
        // MPS 247: each K-frame (4-byte header + ≤ 247) fills one 251-byte LL packet.
        let coc = RadioModel(dataLength: 251, transport: RadioModel.l2capCoC(dataLength: 251))
        #expect(coc.transport == .l2capCoC(mps: 247))
        #expect(coc.packets(forDatagram: 244) == [250])            // 4 + 2 + 244
        #expect(coc.packets(forDatagram: 510) == [251, 251, 22])   // 2+245 | 247 | 18, each + 4
        // A large MPS: one K-frame of 4 + 2 + 510 = 516 bytes cut into LL packets.
        let big = RadioModel(dataLength: 251, transport: .l2capCoC(mps: 4096))
        #expect(big.packets(forDatagram: 510) == [251, 251, 14])
        #expect(RadioModel(dataLength: 27, transport: .l2capCoC(mps: 23)).packets(forDatagram: 40) == [27, 23])   // 2+21 | 19, each + 4
    }

    @Test func oneDatagramWaitsForTheNextAnchor() {
        var s = RadioScheduler<Int>(model: RadioModel(connectionInterval: .milliseconds(30)))
        s.enqueue(1, size: 244, direction: .fromCentral, now: .zero)
        #expect(s.nextArrival == Self.µs(2088))
        s.enqueue(2, size: 244, direction: .fromCentral, now: Self.µs(2500))
        // The first exchange (2088 + 150 + 80 + 150) ended at 2468 with nothing more queued: the
        // event closed, and the second datagram waits for the anchor at 30 ms.
        s.advance(to: Self.µs(2500))
        #expect(s.takeArrivals(through: Self.µs(2500)).map(\.item) == [1])
        #expect(s.nextArrival == Self.µs(32_088))
        s.advance(to: Self.µs(40_000))
        #expect(s.takeArrivals(through: Self.µs(40_000)).map(\.due) == [Self.µs(32_088)])
        #expect(s.count == 0 && s.nextArrival == nil)
    }

    @Test func peripheralAnswersAfterTheCentralPacket() {
        var s = RadioScheduler<String>(model: RadioModel())
        s.enqueue("p", size: 244, direction: .fromPeripheral, now: .zero)
        #expect(s.nextArrival == Self.µs(80 + 150 + 2088))   // empty central packet, T_IFS, data
        s.enqueue("c", size: 244, direction: .fromCentral, now: .zero)
        s.advance(to: Self.µs(1))
        let out = s.takeArrivals(through: Self.µs(10_000))
        #expect(out.map(\.item) == ["c", "p"])
        let expected: [Int64] = [2088, 2088 + 150 + 2088]
        #expect(out.map(\.due) == expected.map(Self.µs))
    }

    @Test func dataLength27() {
        // 10 exchanges in one 7.5 ms event: 9 × (296 + 150 + 80 + 150) + 144.
        let time = RadioScheduler<Int>.streamTime(model: RadioModel(dataLength: 27, connectionInterval: .microseconds(7500)),
                                                  datagramSize: 244, count: 1)
        #expect(time == .microseconds(9 * 676 + 144))
    }

    @Test func connectionIntervalCapacity() {
        // 1M, DLE 251: an exchange of a full packet and an empty one is 2468 µs; three fit in
        // 7.5 ms (7404 µs), the fourth waits for the next event.
        let model = RadioModel(phy: .le1M, connectionInterval: .microseconds(7500))
        var s = RadioScheduler<Int>(model: model)
        for i in 0..<10 { s.enqueue(i, size: 244, direction: .fromCentral, now: .zero) }
        s.advance(to: Self.µs(1_000_000))
        let dues = s.takeArrivals(through: Self.µs(1_000_000))
        #expect(dues.map(\.item) == Array(0..<10))
        let expected: [Instant] = (0..<10).map { (i: Int) -> Instant in
            let event = Int64(i / 3) * 7500
            let slot = Int64(i % 3) * 2468
            return Self.µs(event + slot + 2088)
        }
        #expect(dues.map(\.due) == expected)
        #expect(RadioScheduler<Int>.streamTime(model: model, datagramSize: 244, count: 30)
                == .microseconds(9 * 7500 + 2 * 2468 + 2088))
        // 2M halves the byte time: 1048 + 150 + 44 + 150 = 1392 µs an exchange, five per 7.5 ms.
        var m2 = model
        m2.phy = .le2M
        #expect(RadioScheduler<Int>.streamTime(model: m2, datagramSize: 244, count: 10)
                == .microseconds(7500 + 4 * 1392 + 1048))
        // 15 ms holds six exchanges at 1M.
        var m15 = model
        m15.connectionInterval = .milliseconds(15)
        #expect(RadioScheduler<Int>.streamTime(model: m15, datagramSize: 244, count: 7) == .microseconds(15_000 + 2088))
    }

    @Test func packetsPerEventCap() {
        let model = RadioModel(connectionInterval: .microseconds(7500), maxPacketsPerEvent: 2)
        #expect(RadioScheduler<Int>.streamTime(model: model, datagramSize: 244, count: 3) == .microseconds(7500 + 2088))
        #expect(RadioScheduler<Int>.streamTime(model: model, datagramSize: 244, count: 2) == .microseconds(2468 + 2088))
        // The cap counts packets, not datagrams: a 510-byte value takes three (251, 251, 15). Events:
        // [1a 1b] [1c 2a] [2b 2c]; 2c (200 µs on air) follows a 2468 µs exchange in the third event.
        #expect(RadioModel().packetAirTime(payload: 15) == 200_000)
        #expect(RadioScheduler<Int>.streamTime(model: model, datagramSize: 510, count: 2)
                == .microseconds(2 * 7500 + 2468 + 200))
        // A capped central still sends empty packets so the peripheral can use the event.
        var s = RadioScheduler<Int>(model: model)
        for i in 0..<3 { s.enqueue(i, size: 244, direction: .fromCentral, now: .zero) }
        s.enqueue(9, size: 244, direction: .fromPeripheral, now: .zero)
        s.advance(to: Self.µs(100_000))
        let out = s.takeArrivals(through: Self.µs(100_000))
        // Exchange 1: both full (4476 µs). Exchange 2: central full, peripheral empty. Then the cap.
        #expect(out.map(\.item) == [0, 9, 1, 2])
        let expected: [Int64] = [2088, 2088 + 150 + 2088, 4476 + 2088, 7500 + 2088]
        #expect(out.map(\.due) == expected.map(Self.µs))
    }

    @Test func fifoPerDirectionWithMixedSizesAndTimes() {
        var s = RadioScheduler<Int>(model: RadioModel(dataLength: 27, connectionInterval: .milliseconds(15), maxPacketsPerEvent: 4))
        var sent: [RadioScheduler<Int>.Direction: [Int]] = [:]
        var received: [Int] = []
        var now = Instant.zero
        for i in 0..<200 {
            let direction: RadioScheduler<Int>.Direction = i % 3 == 0 ? .fromPeripheral : .fromCentral
            s.enqueue(i, size: (i * 37) % 240 + 1, direction: direction, now: now)
            sent[direction, default: []].append(i)
            now = now.advanced(by: .microseconds(Int64(i % 7) * 900))
            s.advance(to: now)
            received += s.takeArrivals(through: now).map(\.item)
        }
        var last = now
        while let next = s.nextArrival {
            #expect(next >= last)
            last = next
            s.advance(to: next)
            received += s.takeArrivals(through: next).map(\.item)
        }
        #expect(received.sorted() == Array(0..<200))
        #expect(received.filter { $0 % 3 == 0 } == sent[.fromPeripheral])
        #expect(received.filter { $0 % 3 != 0 } == sent[.fromCentral])
    }

    @Test func simulatedLinkOverTheRadio() {
        var link = SimulatedLink(faults: FaultProfile(latency: .microseconds(100)), maxDatagramSize: 244, seed: 1,
                                 radio: RadioModel(connectionInterval: .microseconds(7500)))
        for i in 0..<4 { link.transmit([UInt8](repeating: UInt8(i), count: 244), from: .a, now: .zero) }
        link.transmit([7], from: .b, now: .zero)
        #expect(link.inFlightCount == 5)
        #expect(link.nextDeliveryTime == Self.µs(2088 + 100))
        #expect(link.deliver(now: Self.µs(2088 + 99)).isEmpty)
        let first = link.deliver(now: Self.µs(2088 + 100))
        #expect(first.map(\.to) == [.b] && first[0].datagram.first == 0)
        // The peripheral's 1-byte notification (8 bytes LL payload, 18 on air) rides after the first central packet.
        #expect(link.nextDeliveryTime == Self.µs(2088 + 150 + 18 * 8 + 100))
        var out = first
        while let next = link.nextDeliveryTime { out += link.deliver(now: next) }
        #expect(out.filter { $0.to == .b }.map { $0.datagram[0] } == [0, 1, 2, 3])
        #expect(out.filter { $0.to == .a }.map(\.datagram) == [[7]])
        #expect(link.counters[.a]?.delivered == 4 && link.counters[.b]?.delivered == 1)
        link.transmit([1], from: .a, now: Self.µs(20_000))
        link.cut()
        #expect(link.inFlightCount == 0 && link.nextDeliveryTime == nil)
    }
}
