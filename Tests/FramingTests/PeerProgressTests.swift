import Framing
import Pipeline
import Testing

/// `ReliableLink.lastPeerProgress`: what a session's idle timeout counts from (issue 20). Only a
/// new data frame taken into the window or an ack of something new moves it.
@Suite struct PeerProgressTests {
    static let t0 = Instant(nanoseconds: 1)
    static func at(_ seconds: Int) -> Instant { t0.advanced(by: .seconds(seconds)) }

    /// `a` sends one message to `b` at t0; returns both links and the frame, delivered to `b`.
    static func oneFrameDelivered() throws -> (a: ReliableLink, b: ReliableLink, frame: [UInt8]) {
        var a = ReliableLink(maxDatagramSize: 182)
        var b = ReliableLink(maxDatagramSize: 182)
        try a.send(message: [1, 2, 3])
        let pendingA = a.nextDatagram(now: t0)
        let frame = try #require(pendingA)
        try b.receive(datagram: frame, now: t0)
        return (a, b, frame)
    }

    @Test func aNewDataFrameIsProgress() throws {
        let (_, b, _) = try Self.oneFrameDelivered()
        #expect(b.lastPeerProgress == Self.t0)
    }

    @Test func nothingReceivedIsNoProgress() {
        let link = ReliableLink(maxDatagramSize: 182)
        #expect(link.lastPeerProgress == nil)
    }

    @Test(arguments: ["bad CRC", "empty", "random bytes", "truncated frame"])
    func aDatagramThatFailsFramingIsNoProgress(variant: String) throws {
        var (a, b, frame) = try Self.oneFrameDelivered()
        try a.send(message: [4, 5, 6])
        let pendingA = a.nextDatagram(now: Self.at(1))
        var next = try #require(pendingA)
        switch variant {
        case "bad CRC": next[next.count - 1] ^= 0x01
        case "empty": next = []
        case "random bytes": next = [0x17, 0x42, 0x99, 0x03, 0x55]
        default: next = Array(frame.prefix(3))
        }
        try b.receive(datagram: next, now: Self.at(29))
        #expect(b.statistics.droppedCorrupt == 1)
        #expect(b.lastPeerProgress == Self.t0)
    }

    @Test func aDuplicateIsNoProgress() throws {
        var (_, b, frame) = try Self.oneFrameDelivered()
        try b.receive(datagram: frame, now: Self.at(29))
        #expect(b.statistics.droppedDuplicate == 1)
        #expect(b.lastPeerProgress == Self.t0)
    }

    @Test func aFrameOutsideTheWindowIsNoProgress() throws {
        var (_, b, _) = try Self.oneFrameDelivered()
        let far = FrameCodec.encodeData(sequence: SequenceNumber(4000), messageLength: 3, isEnd: true, bytes: [9, 9, 9][...])
        try b.receive(datagram: far, now: Self.at(29))
        #expect(b.statistics.droppedOutOfWindow == 1)
        #expect(b.lastPeerProgress == Self.t0)
    }

    @Test func anAckOfSomethingNewIsProgressAndItsRepeatIsNot() throws {
        var (a, b, _) = try Self.oneFrameDelivered()
        #expect(a.lastPeerProgress == nil)
        try b.handleTimers(now: Self.at(1))   // the delayed ack is due
        let pendingB = b.nextDatagram(now: Self.at(1))
        let ack = try #require(pendingB)
        try a.receive(datagram: ack, now: Self.at(1))
        #expect(a.lastPeerProgress == Self.at(1))
        // The same ack again, and an ack of nothing at all: nothing new acknowledged.
        try a.receive(datagram: ack, now: Self.at(29))
        try a.receive(datagram: FrameCodec.encodeAck(cumulative: SequenceNumber(0), selectiveAcks: []), now: Self.at(30))
        #expect(a.lastPeerProgress == Self.at(1))
    }

    @Test func aSelectiveAckOfANewFrameIsProgress() throws {
        var a = ReliableLink(maxDatagramSize: 182)
        for _ in 0..<2 { try a.send(message: [1]) }
        #expect(a.nextDatagram(now: Self.t0) != nil)
        #expect(a.nextDatagram(now: Self.t0) != nil)
        // Frame 1 arrived, frame 0 did not: cumulative 0, bit 0 set (the frame after it).
        try a.receive(datagram: FrameCodec.encodeAck(cumulative: SequenceNumber(0), selectiveAcks: [0x01]), now: Self.at(2))
        #expect(a.lastPeerProgress == Self.at(2))
    }
}
