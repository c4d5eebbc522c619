@testable import Framing
import Pipeline
import Testing

/// RFC 6298 §2 by hand: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R,
/// RTO = SRTT + max(G, 4 RTTVAR) with G = 1 ms, clamped; §5.5 backoff.
@Suite struct RTTEstimatorTests {
    static let ms: Int64 = 1_000_000

    static func estimator(initial: Duration = .seconds(1), minimum: Duration = .milliseconds(200),
                          maximum: Duration = .seconds(8)) -> RTTEstimator {
        RTTEstimator(initial: initial, minimum: minimum, maximum: maximum)
    }

    @Test func startsAtTheInitialRTOWithoutSRTT() {
        let rtt = Self.estimator()
        #expect(rtt.timeout == .seconds(1))
        #expect(rtt.smoothed == nil)
    }

    /// Samples 100, 200, 50 ms:
    /// R=100: SRTT 100, RTTVAR 50, RTO 100 + 200 = 300.
    /// R=200: RTTVAR (150 + 100)/4 = 62.5, SRTT (700 + 200)/8 = 112.5, RTO 112.5 + 250 = 362.5.
    /// R=50:  RTTVAR (187.5 + 62.5)/4 = 62.5, SRTT (787.5 + 50)/8 = 104.6875, RTO 354.6875.
    @Test func rfc6298Sequence() {
        var rtt = Self.estimator()
        let expected: [(sample: Int64, srtt: Int64, rttvar: Int64, rto: Int64)] = [
            (100 * Self.ms, 100_000_000, 50_000_000, 300_000_000),
            (200 * Self.ms, 112_500_000, 62_500_000, 362_500_000),
            (50 * Self.ms, 104_687_500, 62_500_000, 354_687_500),
        ]
        for step in expected {
            rtt.addSample(step.sample)
            #expect(rtt.smoothedRTT == step.srtt)
            #expect(rtt.rttVariance == step.rttvar)
            #expect(rtt.rto == step.rto)
        }
        #expect(rtt.smoothed == .nanoseconds(104_687_500))
        #expect(rtt.timeout == .nanoseconds(354_687_500))
    }

    /// Steady 100 ms samples: RTTVAR 50, 37.5, 28.125 gives RTO 300, 250, 212.5 ms.
    @Test func steadySamplesShrinkTheVariance() {
        var rtt = Self.estimator(minimum: .milliseconds(1))
        var rtos: [Int64] = []
        for _ in 0..<3 {
            rtt.addSample(100 * Self.ms)
            rtos.append(rtt.rto)
        }
        #expect(rtos == [300_000_000, 250_000_000, 212_500_000])
        #expect(rtt.smoothedRTT == 100 * Self.ms)
    }

    @Test func clampedToMinimumAndMaximum() {
        var fast = Self.estimator()
        fast.addSample(10 * Self.ms)   // 10 + 4 * 5 = 30 ms
        #expect(fast.rto == 200 * Self.ms)
        var slow = Self.estimator()
        slow.addSample(5_000 * Self.ms)   // 5 s + 4 * 2.5 s = 15 s
        #expect(slow.rto == 8_000 * Self.ms)
    }

    /// With no variance left the clock granularity G = 1 ms is added; a negative sample counts as 0.
    @Test func granularityAndNegativeSamples() {
        var rtt = Self.estimator(minimum: .milliseconds(1))
        rtt.addSample(-5)
        #expect(rtt.smoothedRTT == 0 && rtt.rttVariance == 0)
        #expect(rtt.rto == Self.ms)
        var odd = Self.estimator(minimum: .milliseconds(1))
        odd.addSample(3)   // RTTVAR = 3 / 2, truncated
        #expect(odd.rttVariance == 1)
        #expect(odd.rto == 3 + Self.ms)
    }

    /// Doubling once per round: frames sent before the last doubling do not double it again; a new
    /// sample ends the backoff; the maximum holds.
    @Test func backoffOncePerRound() {
        var rtt = Self.estimator()
        let t = { (ms: UInt64) in Instant(nanoseconds: ms * 1_000_000) }
        // (frame last sent, expiry at, doubles, RTO after)
        let rounds: [(sent: UInt64, now: UInt64, doubles: Bool, rto: Duration)] = [
            (0, 1000, true, .seconds(2)),
            (500, 1500, false, .seconds(2)),    // sent before the doubling at 1000
            (1000, 3000, true, .seconds(4)),    // sent at the doubling: a new round
            (3000, 7000, true, .seconds(8)),
            (7000, 15000, true, .seconds(8)),   // counted, but held at the maximum
        ]
        for round in rounds {
            let doubled = rtt.backOff(frameSentAt: t(round.sent), now: t(round.now))
            #expect(doubled == round.doubles)
            #expect(rtt.timeout == round.rto)
        }
        rtt.addSample(100 * Self.ms)
        #expect(rtt.timeout == .milliseconds(300))
        let doubled = rtt.backOff(frameSentAt: t(0), now: t(16000))   // no doubling since the sample
        #expect(doubled)
        #expect(rtt.timeout == .milliseconds(600))
    }
}
