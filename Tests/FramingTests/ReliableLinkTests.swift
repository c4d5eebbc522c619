import Framing
import MemoryTransport
import Pipeline
import Testing

@Suite struct ReliableLinkTests {
    static let datagramSizes = [20, 182, 244, 510]

    static func transfer(datagramSize: Int, faults: FaultProfile, seed: UInt64,
                         configuration: LinkConfiguration = .init()) throws -> LinkHarness {
        var h = LinkHarness(configuration: configuration, datagramSize: datagramSize, faults: faults, seed: seed)
        let forward = randomMessages(count: 200, maxSize: 5000, seed: seed &* 31 &+ 1)
        let backward = randomMessages(count: 40, maxSize: 5000, seed: seed &* 31 &+ 2)
        for m in forward { try h.a.send(message: m) }
        for m in backward { try h.b.send(message: m) }
        #expect(h.a.bufferedOutboundBytes == forward.reduce(0) { $0 + $1.count })
        try h.runUntilQuiet()
        #expect(h.receivedByB.count == forward.count)
        #expect(h.receivedByB == forward, "seed \(seed) size \(datagramSize)")
        #expect(h.receivedByA == backward, "seed \(seed) size \(datagramSize)")
        #expect(h.a.isIdle && h.b.isIdle)
        #expect(h.a.bufferedOutboundBytes == 0 && h.b.bufferedOutboundBytes == 0)
        #expect(h.a.statistics.maxReorderBuffered <= configuration.window)
        #expect(h.b.statistics.maxReorderBuffered <= configuration.window)
        return h
    }

    @Test(arguments: datagramSizes)
    func cleanLinkDeliversEverythingInOrder(datagramSize: Int) throws {
        let h = try Self.transfer(datagramSize: datagramSize, faults: .clean, seed: 1)
        #expect(h.a.statistics.retransmissions == 0)
        #expect(h.b.statistics.droppedDuplicate == 0)
        #expect(h.a.statistics.messagesDelivered == 40)
        #expect(h.b.statistics.messagesDelivered == 200)
        // Acks are rare: about one per 32 frames.
        let frames = h.a.statistics.dataFramesSent
        #expect(h.b.statistics.acksSent <= frames / 32 + 50)
    }

    @Test(arguments: datagramSizes, [UInt64(11), 12, 13])
    func hostileLinkDeliversEverythingInOrder(datagramSize: Int, seed: UInt64) throws {
        let h = try Self.transfer(datagramSize: datagramSize, faults: .hostile, seed: seed)
        let net = h.network.counters[.a]!
        #expect(net.dropped > 0 && net.duplicated > 0 && net.reordered > 0 && net.corrupted > 0)
        #expect(h.a.statistics.retransmissions > 0)
        #expect(h.b.statistics.droppedCorrupt > 0)
        #expect(h.b.statistics.droppedDuplicate > 0)
    }

    /// At MTU 23 a sender writes 20-byte datagrams but hears acks in 18-byte notifications, whose
    /// 14-byte bitmap describes 112 frames: it must not keep more than that in flight.
    @Test(arguments: [(20, nil, 128), (20, 18, 112), (18, 20, 112), (510, 508, 256)] as [(Int, Int?, Int)])
    func windowIsBoundedByTheSmallerDirection(own: Int, peer: Int?, expected: Int) throws {
        var link = ReliableLink(maxDatagramSize: own)
        link.peerMaxDatagramSize = peer
        for _ in 0..<40 { try link.send(message: [UInt8](repeating: 1, count: 4000)) }
        var inFlight = 0
        while link.nextDatagram(now: .zero) != nil { inFlight += 1 }
        #expect(inFlight == expected)
    }

    @Test func heavyLossStillDelivers() throws {
        // 15 % loss each way: one attempt in 3.6 fails; the oldest frame gets ~9 attempts
        // (RTO backing off to 8 s) before LinkDeadAfter. Not every seed survives this: 5 of seeds
        // 1...40 end in linkDead on the virtual network (7 of 40 under the loop it replaced), so
        // the seed is one that does; what is tested is that delivery is exact when it does.
        let faults = FaultProfile(loss: 0.15, duplication: 0.05, reordering: 0.2, corruption: 0.05,
                                  latency: .milliseconds(15), jitter: .milliseconds(10))
        _ = try Self.transfer(datagramSize: 64, faults: faults, seed: 100)
    }

    @Test func smallWindowAndMinimumDatagram() throws {
        let configuration = LinkConfiguration(window: 3, ackEvery: 2)
        _ = try Self.transfer(datagramSize: 8, faults: .hostile, seed: 5, configuration: configuration)
    }

    @Test func sequenceNumbersWrapAround() throws {
        var h = LinkHarness(datagramSize: 20, faults: .hostile, seed: 77)
        let messages = randomMessages(count: 60, maxSize: 4000, seed: 78)   // ~120 KB ≈ 7,500 frames
        let more = randomMessages(count: 40, maxSize: 4000, seed: 79)
        for m in messages + more { try h.a.send(message: m) }
        try h.runUntilQuiet()
        #expect(h.a.statistics.dataFramesSent > 8192 + 500)
        #expect(h.receivedByB == messages + more)
    }

    @Test func linkDeadWhenPeerVanishes() throws {
        var h = LinkHarness(datagramSize: 182, faults: .clean, seed: 3)
        try h.a.send(message: randomMessages(count: 1, maxSize: 1, seed: 1)[0] + [UInt8](repeating: 1, count: 3000))
        _ = try h.step()
        h.vanished = .b
        let start = h.now
        var failure: LinkError?
        do { try h.runUntilQuiet() } catch { failure = error }
        #expect(failure == .linkDead)
        let elapsed = h.now.duration(since: start)
        #expect(elapsed >= .seconds(19) && elapsed <= .seconds(21))
        #expect(h.a.statistics.timeouts >= 3)
        #expect(throws: LinkError.linkDead) { try h.a.send(message: [1]) }
        #expect(h.a.nextDatagram(now: h.now) == nil)
    }

    @Test func outOfOrderBufferStaysWithinWindow() throws {
        // Only the very first frame is lost: everything else arrives and must wait for it.
        let configuration = LinkConfiguration(window: 16, ackEvery: 4)
        var sender = ReliableLink(configuration: configuration, maxDatagramSize: 20)
        var receiver = ReliableLink(configuration: configuration, maxDatagramSize: 20)
        for m in randomMessages(count: 20, maxSize: 100, seed: 4) { try sender.send(message: m) }
        let now = Instant(nanoseconds: 1)
        var sent: [[UInt8]] = []
        while let d = sender.nextDatagram(now: now) { sent.append(d) }
        #expect(sent.count == 16)   // the window caps the flight
        for d in sent.dropFirst() { try receiver.receive(datagram: d, now: now) }
        #expect(receiver.statistics.maxReorderBuffered == 15)
        #expect(receiver.nextMessage() == nil)
        // Frames from beyond the window are refused, not buffered.
        var far = ReliableLink(configuration: configuration, maxDatagramSize: 20)
        for m in randomMessages(count: 40, maxSize: 100, seed: 4) { try far.send(message: m) }
        var farFrames: [[UInt8]] = []
        var t = now
        for _ in 0..<4 {
            while let d = far.nextDatagram(now: t) { farFrames.append(d) }
            // Pretend everything was acknowledged so the far sender moves on.
            var ackSource = ReliableLink(configuration: configuration, maxDatagramSize: 20)
            for d in farFrames { try ackSource.receive(datagram: d, now: t) }
            while let ack = ackSource.nextDatagram(now: t) { try far.receive(datagram: ack, now: t) }
            t = t.advanced(by: .milliseconds(1))
        }
        for d in farFrames.dropFirst(32) { try receiver.receive(datagram: d, now: now) }
        #expect(receiver.statistics.maxReorderBuffered <= 16)
        #expect(receiver.statistics.droppedOutOfWindow > 0)
    }

    @Test func datagramSizeChangeMidStream() throws {
        var h = LinkHarness(datagramSize: 510, faults: .clean, seed: 8)
        // More than a window of frames, so that some are built after the change.
        let messages = randomMessages(count: 240, maxSize: 5000, seed: 9)
        for m in messages { try h.a.send(message: m) }
        _ = try h.step()
        #expect(h.a.statistics.dataFramesSent == h.a.configuration.window)
        // Down to 20: frames built from now on must fit; clean link, so nothing old is resent.
        h.a.maxDatagramSize = 20
        let before = h.a.statistics.datagramBytesSent
        let framesBefore = h.a.statistics.dataFramesSent
        h.network.maxDatagramSize = 20
        for _ in 0..<200 { _ = try h.step() }
        #expect(h.network.counters[.a]!.oversize == 0)
        let smallFrames = h.a.statistics.dataFramesSent - framesBefore
        #expect(smallFrames > 0)
        #expect(h.a.statistics.datagramBytesSent - before <= smallFrames * 20)
        // Up to 244 on a lossy link.
        h.a.maxDatagramSize = 244
        h.network.maxDatagramSize = 244
        h.network.faults = .hostile
        try h.runUntilQuiet()
        #expect(h.receivedByB == messages)
    }

    @Test func freshLinksAfterCut() throws {
        var h = LinkHarness(datagramSize: 182, faults: .lossy(percent: 5), seed: 21)
        let messages = randomMessages(count: 50, maxSize: 3000, seed: 22)
        for m in messages { try h.a.send(message: m) }
        while h.receivedByB.count < 10 { _ = try h.step() }
        let got = h.receivedByB
        #expect(got.count < messages.count)
        #expect(got == Array(messages.prefix(got.count)))
        // Reconnect: drop what is in flight, new endpoints, resend the rest.
        h.network.cut()
        h.a = ReliableLink(maxDatagramSize: 182)
        h.b = ReliableLink(maxDatagramSize: 182)
        for m in messages.dropFirst(got.count) { try h.a.send(message: m) }
        try h.runUntilQuiet()
        #expect(h.receivedByB == messages)
    }

    @Test func invalidMessagesAreRefused() {
        var link = ReliableLink(configuration: LinkConfiguration(maxMessageLength: 1000), maxDatagramSize: 4)
        #expect(link.maxDatagramSize == 8)
        #expect(throws: LinkError.emptyMessage) { try link.send(message: []) }
        #expect(throws: LinkError.messageTooLarge) { try link.send(message: [UInt8](repeating: 0, count: 1001)) }
        #expect(throws: Never.self) { try link.send(message: [UInt8](repeating: 0, count: 1000)) }
        #expect(link.bufferedOutboundBytes == 1000)
        #expect(!link.isIdle)
    }

    @Test func peerProtocolViolationEndsTheLink() throws {
        var link = ReliableLink(maxDatagramSize: 182)
        let now = Instant(nanoseconds: 1)
        // A continuation without a start, at the expected sequence number.
        let bad = FrameCodec.encode(.data(sequence: .zero, fragment: Fragment(messageLength: nil, isEnd: true, bytes: [1])))
        #expect(throws: LinkError.self) { try link.receive(datagram: bad, now: now) }
        #expect(throws: LinkError.self) { try link.handleTimers(now: now) }
        // Corrupt and garbage datagrams are only counted.
        var fresh = ReliableLink(maxDatagramSize: 182)
        var random = SeededRandom(seed: 5)
        for _ in 0..<2000 { try fresh.receive(datagram: random.bytes(Int(random.next() % 40)), now: now) }
        #expect(fresh.statistics.droppedCorrupt > 1900)
    }

    /// An empty datagram (a zero-length Write Command) is a malformed frame: counted as corrupt and
    /// dropped, and the link goes on (issue 9, defect 10).
    @Test func emptyDatagramIsCountedAndDropped() throws {
        var a = ReliableLink(maxDatagramSize: 182)
        var b = ReliableLink(maxDatagramSize: 182)
        let now = Instant(nanoseconds: 1)
        try b.receive(datagram: [], now: now)
        #expect(b.statistics.droppedCorrupt == 1)
        #expect(b.statistics.datagramsReceived == 1 && b.statistics.framesReceived == 0)
        #expect(b.nextMessage() == nil)
        try a.send(message: [1, 2, 3])
        let maybeFrame = a.nextDatagram(now: now)
        let frame = try #require(maybeFrame)
        try b.receive(datagram: frame, now: now)
        try b.receive(datagram: [], now: now)
        #expect(b.nextMessage() == [1, 2, 3])
        #expect(b.statistics.droppedCorrupt == 2)
        #expect(throws: Never.self) { try b.handleTimers(now: now.advanced(by: .milliseconds(20))) }
    }

    @Test func duplicateIsDroppedAndAckedAtOnce() throws {
        var a = ReliableLink(maxDatagramSize: 182)
        var b = ReliableLink(maxDatagramSize: 182)
        let now = Instant(nanoseconds: 1)
        try a.send(message: [1, 2, 3])
        let maybeFrame = a.nextDatagram(now: now)
        let frame = try #require(maybeFrame)
        try b.receive(datagram: frame, now: now)
        #expect(b.nextMessage() == [1, 2, 3])
        #expect(b.nextDatagram(now: now) == nil)   // delayed ack
        #expect(b.nextDeadline == now.advanced(by: .milliseconds(20)))
        let maybeAck = b.nextDatagram(now: now.advanced(by: .milliseconds(20)))
        let ack = try #require(maybeAck)
        try a.receive(datagram: ack, now: now.advanced(by: .milliseconds(40)))
        #expect(a.isIdle)
        #expect(a.smoothedRoundTripTime == .milliseconds(40))
        try b.receive(datagram: frame, now: now)
        #expect(b.statistics.droppedDuplicate == 1)
        #expect(b.nextMessage() == nil)
        #expect(b.nextDatagram(now: now) != nil)   // immediate ack
    }

    @Test func ackEveryThirtyTwoFrames() throws {
        var a = ReliableLink(maxDatagramSize: 20)
        var b = ReliableLink(maxDatagramSize: 20)
        let now = Instant(nanoseconds: 1)
        try a.send(message: [UInt8](repeating: 9, count: 16 * 100))
        var acks = 0
        for _ in 0..<96 {
            let maybe = a.nextDatagram(now: now)
            let d = try #require(maybe)
            try b.receive(datagram: d, now: now)
            while b.nextDatagram(now: now) != nil { acks += 1 }
        }
        #expect(acks == 3)
    }
}
