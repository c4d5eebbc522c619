@testable import Framing
import Pipeline
import Testing

@Suite struct SendWindowTests {
    /// RTO 300 ms, in nanoseconds as `RTTEstimator` keeps it.
    static let rto: Int64 = 300_000_000

    static func at(_ ms: UInt64) -> Instant { Instant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    /// A window with frames 0..<count sent at 0, 1, 2 ... ms, each carrying 10 payload bytes.
    static func window(sending count: Int, capacity: Int = 64) -> SendWindow {
        var window = SendWindow(capacity: capacity, linkDeadAfter: .seconds(20))
        for i in 0..<count {
            window.add(datagram: [UInt8(i)], payloadCount: 10, now: at(UInt64(i)), rto: rto)
        }
        return window
    }

    /// Every datagram queued for retransmission, taken at `now`.
    static func retransmissions(_ window: inout SendWindow, now: Instant) -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let datagram = window.nextRetransmission(now: now, rto: rto) { out.append(datagram) }
        return out
    }

    @Test func newFramesTakeSequenceNumbersAndStartTheTimer() {
        let window = Self.window(sending: 3)
        #expect(window.inFlight == 3)
        #expect(window.oldest == .zero && window.next == SequenceNumber(3))
        #expect(window.retransmitDeadline == Self.at(300))
        #expect(window.nextDeadline == Self.at(300))
        #expect(!window.hasQueuedRetransmissions)
        #expect(SendWindow(capacity: 4, linkDeadAfter: .seconds(1)).nextDeadline == nil)
    }

    /// At the deadline, the frames whose own timer expired are queued, oldest first; the rest keep
    /// their timers; a resent frame gets a fresh one.
    @Test func retransmissionTimeout() {
        var window = Self.window(sending: 3)
        let early = window.expireTimers(now: Self.at(299), rto: Self.rto)
        #expect(early == nil && !window.hasQueuedRetransmissions)

        let latestExpired = window.expireTimers(now: Self.at(301), rto: Self.rto)
        #expect(latestExpired == Self.at(1))                  // frames 0 and 1
        #expect(window.retransmitDeadline == Self.at(302))    // frame 2's timer
        #expect(Self.retransmissions(&window, now: Self.at(301)) == [[0], [1]])
        #expect(!window.hasQueuedRetransmissions)

        let third = window.expireTimers(now: Self.at(302), rto: Self.rto)
        #expect(third == Self.at(2))
        #expect(window.retransmitDeadline == Self.at(601))    // frame 0 resent at 301
        #expect(Self.retransmissions(&window, now: Self.at(302)) == [[2]])
    }

    @Test func restartTimersAfterTheRTOShrank() {
        var window = Self.window(sending: 3)
        window.restartTimers(rto: 200_000_000)
        #expect(window.retransmitDeadline == Self.at(200))
    }

    @Test func cumulativeAckFreesFramesAndGivesASample() throws {
        var window = Self.window(sending: 5)
        let ack = window.acknowledge(cumulative: SequenceNumber(3), bitmap: [], now: Self.at(50))
        #expect(ack?.payloadBytes == 30)
        #expect(ack?.sampleSentAt == Self.at(2))   // the latest frame acknowledged
        #expect(ack?.selectiveReach == 0)
        #expect(window.inFlight == 2 && window.oldest == SequenceNumber(3))
        // Acknowledging everything stops the timer.
        _ = window.acknowledge(cumulative: SequenceNumber(5), bitmap: [], now: Self.at(60))
        #expect(window.inFlight == 0)
        #expect(window.retransmitDeadline == nil && window.nextDeadline == nil)
    }

    @Test func staleAcksAreIgnored() {
        var window = Self.window(sending: 5)
        let beyond = window.acknowledge(cumulative: SequenceNumber(6), bitmap: [], now: Self.at(50))
        #expect(beyond == nil)
        _ = window.acknowledge(cumulative: SequenceNumber(3), bitmap: [], now: Self.at(50))
        let behind = window.acknowledge(cumulative: SequenceNumber(2), bitmap: [], now: Self.at(51))
        #expect(behind == nil)
        #expect(window.inFlight == 2)
    }

    /// Karn: a resent frame gives no sample. Frames more than 32 past the previous cumulative
    /// point give none either.
    @Test func samplesOnlyFromFramesSentOnceAndWithin32() {
        var resent = Self.window(sending: 2)
        _ = resent.expireTimers(now: Self.at(400), rto: Self.rto)
        #expect(Self.retransmissions(&resent, now: Self.at(400)).count == 2)
        let ack = resent.acknowledge(cumulative: SequenceNumber(2), bitmap: [], now: Self.at(450))
        #expect(ack != nil && ack?.sampleSentAt == nil)

        var far = Self.window(sending: 40)
        let farAck = far.acknowledge(cumulative: SequenceNumber(40), bitmap: [], now: Self.at(500))
        #expect(farAck?.sampleSentAt == Self.at(32))
        #expect(farAck?.payloadBytes == 400)
    }

    /// Bits mark later frames; bits past the frames in flight are ignored.
    @Test func selectiveAcks() {
        var window = Self.window(sending: 4)
        let ack = window.acknowledge(cumulative: .zero, bitmap: [0b0000_0101, 0xFF], now: Self.at(40))
        #expect(ack?.payloadBytes == 20)        // frames 1 and 3
        #expect(ack?.selectiveReach == 3)       // up to frame 3
        #expect(ack?.sampleSentAt == Self.at(3))
        #expect(window.inFlight == 4)           // not cumulative: still in flight
        // The same bits again acknowledge nothing new.
        let again = window.acknowledge(cumulative: .zero, bitmap: [0b101], now: Self.at(41))
        #expect(again?.payloadBytes == 0)
        #expect(again != nil && again?.sampleSentAt == nil)
    }

    /// Frames before the reach are queued at once the first time, and again only once `gap` has
    /// passed since they were last sent.
    @Test func fastRetransmitOncePerSmoothedRTT() {
        var window = Self.window(sending: 4)
        let ack = window.acknowledge(cumulative: .zero, bitmap: [0b0100], now: Self.at(40))
        #expect(ack?.selectiveReach == 3)       // frame 3 arrived; 0, 1, 2 did not
        let gap: Int64 = 50_000_000
        let first = window.queueFastRetransmissions(before: 3, gap: gap, now: Self.at(40))
        let repeated = window.queueFastRetransmissions(before: 3, gap: gap, now: Self.at(40))
        #expect(first == 3 && repeated == 0)
        #expect(Self.retransmissions(&window, now: Self.at(40)) == [[0], [1], [2]])
        // Resent at 40 ms: not again before 90 ms.
        let tooSoon = window.queueFastRetransmissions(before: 3, gap: gap, now: Self.at(89))
        let afterGap = window.queueFastRetransmissions(before: 3, gap: gap, now: Self.at(90))
        #expect(tooSoon == 0 && afterGap == 3)
        let noReach = window.queueFastRetransmissions(before: 0, gap: 0, now: Self.at(90))
        #expect(noReach == 0)
    }

    /// An ack for a frame waiting to be resent takes it off the queue.
    @Test func ackCancelsAQueuedRetransmission() {
        var window = Self.window(sending: 2)
        _ = window.expireTimers(now: Self.at(400), rto: Self.rto)
        #expect(window.hasQueuedRetransmissions)
        _ = window.acknowledge(cumulative: SequenceNumber(2), bitmap: [], now: Self.at(401))
        #expect(!window.hasQueuedRetransmissions)
        #expect(Self.retransmissions(&window, now: Self.at(401)).isEmpty)
    }

    /// Dead when the oldest frame made no progress for `linkDeadAfter`; a cumulative ack is progress.
    @Test func linkDead() {
        var window = SendWindow(capacity: 8, linkDeadAfter: .seconds(20))
        #expect(!window.isDead(now: Self.at(100_000)))   // nothing in flight
        window.add(datagram: [0], payloadCount: 1, now: Self.at(0), rto: Self.rto)
        window.add(datagram: [1], payloadCount: 1, now: Self.at(5_000), rto: Self.rto)
        #expect(window.nextDeadline == Self.at(300))
        #expect(!window.isDead(now: Self.at(19_999)))
        #expect(window.isDead(now: Self.at(20_000)))
        _ = window.acknowledge(cumulative: SequenceNumber(1), bitmap: [], now: Self.at(10_000))
        #expect(!window.isDead(now: Self.at(29_999)))
        #expect(window.isDead(now: Self.at(30_000)))
        _ = window.expireTimers(now: Self.at(30_000), rto: Self.rto)   // frame 1 queued: nothing timed
        #expect(window.nextDeadline == Self.at(30_000))
    }

    /// The nanosecond shortcuts give what the `Duration` round trip gives, saturating alike.
    @Test func nanosecondArithmeticMatchesDuration() {
        let instants: [UInt64] = [0, 1, 999, 1_000_000_000, UInt64.max - 5, UInt64.max]
        let counts: [Int64] = [0, 1, 300_000_000, -1, -2_000_000_000, Int64.max, Int64.min + 1]
        for i in instants {
            let instant = Instant(nanoseconds: i)
            for n in counts {
                #expect(instant.advanced(byNanoseconds: n) == instant.advanced(by: .nanoseconds(n)))
            }
            for j in instants {
                let other = Instant(nanoseconds: j)
                #expect(instant.nanoseconds(since: other) == instant.duration(since: other).nanoseconds)
            }
        }
    }
}
