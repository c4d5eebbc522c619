import Framing
import Pipeline
import Testing
@testable import Session

/// The idle timeout of both sessions (`LinkLayer`, docs/protocol.md §6) counts from the peer's
/// last progress, not from its last datagram (issue 20).
@Suite struct LinkLivenessTests {
    static func at(_ seconds: Int) -> Instant { Instant.zero.advanced(by: .seconds(seconds)) }

    /// Feeds `link` the datagram `next(n)` at 29 s, 58 s, … until 300 s, running its timers in
    /// between as a driver would; returns when the link was declared lost, if it was.
    static func lostAt(_ link: inout LinkLayer, _ next: (Int) throws -> [UInt8]) throws -> Instant? {
        for (n, t) in stride(from: 29, through: 300, by: 29).enumerated() {
            while let deadline = link.nextDeadline, deadline <= at(t) {
                do { try link.handleTimers(now: deadline) } catch {
                    #expect(error == .linkLost)
                    return deadline
                }
                while link.nextDown(now: deadline) != nil {}
            }
            try link.receive(try next(n), now: at(t))
            while link.nextDown(now: at(t)) != nil {}
        }
        return nil
    }

    static func freshLink() -> LinkLayer {
        LinkLayer(configuration: .init(), maxDatagramSize: 244, peerMaxDatagramSize: nil, fillsWindow: false, now: .zero)
    }

    @Test(arguments: ["a bad CRC", "an empty datagram", "a duplicate", "an ack of nothing", "a frame outside the window"])
    func junkEvery29SecondsDoesNotKeepTheLinkAlive(variant: String) throws {
        var link = Self.freshLink()
        var peer = ReliableLink(maxDatagramSize: 244)
        try peer.send(message: [1, 2, 3])
        let pendingPeer = peer.nextDatagram(now: .zero)
        let first = try #require(pendingPeer)
        try link.receive(first, now: .zero)
        let lost = try Self.lostAt(&link) { _ in
            switch variant {
            case "a bad CRC": return first.dropLast() + [first[first.count - 1] ^ 0x01]
            case "an empty datagram": return []
            case "a duplicate": return first
            case "an ack of nothing": return FrameCodec.encodeAck(cumulative: SequenceNumber(0), selectiveAcks: [])
            default: return FrameCodec.encodeData(sequence: SequenceNumber(3000), messageLength: 1, isEnd: true, bytes: [1][...])
            }
        }
        #expect(lost == Self.at(30), "the peer's last progress was at 0 s")
    }

    @Test func aNewFrameEvery29SecondsKeepsTheLinkAlive() throws {
        var link = Self.freshLink()
        // The link's acks are not delivered here: a peer that never retransmits sends new frames only.
        let patient = LinkConfiguration(initialRTO: .seconds(3600), minRTO: .seconds(3600), maxRTO: .seconds(3600),
                                        linkDeadAfter: .seconds(36_000))
        var peer = ReliableLink(configuration: patient, maxDatagramSize: 244)
        let lost = try Self.lostAt(&link) { n in
            try peer.send(message: [UInt8(n)])
            let pendingPeer = peer.nextDatagram(now: Self.at(29 * (n + 1)))
            return try #require(pendingPeer)
        }
        #expect(lost == nil)
        var delivered: [UInt8] = []
        while let message = link.nextUp() { delivered += message }
        #expect(delivered == Array(0..<10))
    }

    @Test func ourFramesAcknowledgedEvery29SecondsKeepTheLinkAlive() throws {
        var link = Self.freshLink()
        var peer = ReliableLink(configuration: LinkConfiguration(ackDelay: .zero), maxDatagramSize: 244)
        for n in 0..<10 {
            let now = Self.at(29 * (n + 1))
            try link.handleTimers(now: now)   // throws linkLost once the idle timeout has passed
            // One message of ours, which the peer acknowledges at once.
            try link.send([UInt8(n)], now: now)
            while let datagram = link.nextDown(now: now) { try peer.receive(datagram: datagram, now: now) }
            try peer.handleTimers(now: now)
            let pendingPeer = peer.nextDatagram(now: now)
            try link.receive(try #require(pendingPeer), now: now)
        }
        #expect(link.nextDeadline == Self.at(290 + 30))
    }
    /// The receiver's link (issue 31): until a record from the peer opened (`peerProvedLive`), a
    /// new frame is no progress, so the replayer of a trusted sender's message 1, who can send
    /// fragments but never a record, is dropped at the idle timeout. Once the peer proved it holds
    /// the keys, frames count again (a slow link's long record arrives frame by frame).
    @Test func aReceiversLinkCountsFramesOnlyOnceThePeerProvedLive() throws {
        let patient = LinkConfiguration(initialRTO: .seconds(3600), minRTO: .seconds(3600), maxRTO: .seconds(3600),
                                        linkDeadAfter: .seconds(36_000))
        func fragments() -> (Int) throws -> [UInt8] {
            var peer = ReliableLink(configuration: patient, maxDatagramSize: 244)
            return { n in
                try peer.send(message: [UInt8(n)])
                let pendingPeer = peer.nextDatagram(now: Self.at(29 * (n + 1)))
                return try #require(pendingPeer)
            }
        }
        var replayed = LinkLayer(configuration: .init(), maxDatagramSize: 244, peerMaxDatagramSize: nil, fillsWindow: false,
                                 framesCountBeforeLive: false, now: .zero)
        #expect(try Self.lostAt(&replayed, fragments()) == Self.at(30))

        var live = LinkLayer(configuration: .init(), maxDatagramSize: 244, peerMaxDatagramSize: nil, fillsWindow: false,
                             framesCountBeforeLive: false, now: .zero)
        live.handle(.peerProvedLive(at: Self.at(1)))
        #expect(live.nextDeadline == Self.at(31))
        #expect(try Self.lostAt(&live, fragments()) == nil)
    }
}
