@testable import Framing
import Pipeline
import Testing

@Suite struct AckSchedulerTests {
    static func at(_ ms: UInt64) -> Instant { Instant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    @Test func nothingOwedAtFirst() {
        let acks = AckScheduler(ackEvery: 32, ackDelay: .milliseconds(20))
        #expect(!acks.isOwed)
        #expect(!acks.isDue(now: Self.at(1_000_000)))
        #expect(acks.deadline == nil)
    }

    /// The delay runs from the first unacknowledged frame; later frames do not move it.
    @Test func delayedAckFromTheFirstFrame() {
        var acks = AckScheduler(ackEvery: 32, ackDelay: .milliseconds(20))
        acks.frameAccepted(now: Self.at(0))
        acks.frameAccepted(now: Self.at(15))
        #expect(acks.isOwed)
        #expect(acks.deadline == Self.at(20))
        #expect(!acks.isDue(now: Self.at(19)))
        #expect(acks.isDue(now: Self.at(20)))
        acks.handleTimer(now: Self.at(19))
        #expect(!acks.isImmediate)
        acks.handleTimer(now: Self.at(20))
        #expect(acks.isImmediate)
        #expect(acks.isDue(now: Self.at(0)))
    }

    @Test func everyAckEveryFrames() {
        var acks = AckScheduler(ackEvery: 4, ackDelay: .milliseconds(20))
        for i in 0..<3 {
            acks.frameAccepted(now: Self.at(UInt64(i)))
            #expect(!acks.isDue(now: Self.at(3)))
        }
        acks.frameAccepted(now: Self.at(3))
        #expect(acks.isDue(now: Self.at(3)))
        #expect(acks.framesSinceAck == 4)
    }

    @Test func ackNowAndAckSent() {
        var acks = AckScheduler(ackEvery: 32, ackDelay: .milliseconds(20))
        acks.ackNow()
        #expect(acks.isOwed && acks.isDue(now: Self.at(0)))
        #expect(acks.deadline == nil)   // an immediate ack starts no delay
        acks.frameAccepted(now: Self.at(1))
        acks.ackSent()
        #expect(!acks.isOwed && !acks.isImmediate && acks.deadline == nil && acks.framesSinceAck == 0)
        // A fresh delay starts with the next frame.
        acks.frameAccepted(now: Self.at(50))
        #expect(acks.deadline == Self.at(70))
    }

    @Test func ackEveryOneAndZeroDelay() {
        var every = AckScheduler(ackEvery: 1, ackDelay: .milliseconds(20))
        every.frameAccepted(now: Self.at(0))
        #expect(every.isImmediate)
        var noDelay = AckScheduler(ackEvery: 32, ackDelay: .zero)
        noDelay.frameAccepted(now: Self.at(5))
        #expect(!noDelay.isImmediate)
        #expect(noDelay.isDue(now: Self.at(5)))
    }
}
