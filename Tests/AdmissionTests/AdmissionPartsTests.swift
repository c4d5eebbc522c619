import Admission
import Pipeline
import Testing

/// The configuration's numbers, the backoff on its own, and a fresh policy.
@Suite("Admission configuration and parts")
struct AdmissionPartsTests {
    @Test func defaultsAreTheIssuesNumbers() {
        let configuration = AdmissionConfiguration()
        #expect(configuration.maxLinks == 3 && AdmissionConfiguration.defaultMaxLinks == 3)
        #expect(configuration.maxUnauthenticated == 2 && configuration.unauthenticatedCap == 2)
        #expect(configuration.bareLinkTimeout == .seconds(8))
        #expect(configuration.handshakeTimeout == .seconds(10))
        #expect(configuration.stallTimeout == .seconds(15))
        #expect(configuration.reregisterInterval == .seconds(10))
        #expect(configuration.backoff == BackoffConfiguration(base: .seconds(2), cap: .seconds(60), rememberedDevices: 256))
    }

    @Test func contradictoryNumbersAreClamped() {
        let configuration = AdmissionConfiguration(maxLinks: 1, maxUnauthenticated: 0, bareLinkTimeout: .seconds(-1),
                                                   backoff: .init(base: .seconds(4), cap: .seconds(1), rememberedDevices: 0))
        #expect(configuration.maxLinks == 2)
        #expect(configuration.unauthenticatedCap == 1, "one slot is kept, one is left for a handshake")
        #expect(configuration.bareLinkTimeout == .zero)
        #expect(configuration.backoff.cap == .seconds(4) && configuration.backoff.rememberedDevices == 1)
        #expect(AdmissionConfiguration(maxLinks: 3, maxUnauthenticated: 9).unauthenticatedCap == 2)
    }

    @Test(arguments: [(0, 0), (1, 2), (2, 4), (3, 8), (4, 16), (5, 32), (6, 60), (7, 60), (64, 60), (Int.max, 60)] as [(Int, Int64)])
    func backoffDoublesFromTwoSecondsUpToAMinute(failures: Int, seconds: Int64) {
        #expect(DeviceBackoff().delay(afterFailures: failures) == .seconds(seconds))
    }

    @Test func backoffForgetsOnSuccessAndKeepsAtMostItsDevices() {
        var backoff = DeviceBackoff(configuration: .init(rememberedDevices: 2))
        let (a, b, c) = (DeviceID("a"), DeviceID("b"), DeviceID("c"))
        #expect(backoff.recordFailure(of: a, now: .zero) == Instant(nanoseconds: 2_000_000_000))
        #expect(backoff.recordFailure(of: a, now: Instant(nanoseconds: 1_000_000_000)) == Instant(nanoseconds: 5_000_000_000))
        #expect(backoff.backoffEnd(for: a, now: Instant(nanoseconds: 4_999_999_999)) == Instant(nanoseconds: 5_000_000_000))
        #expect(backoff.backoffEnd(for: a, now: Instant(nanoseconds: 5_000_000_000)) == nil)
        #expect(backoff.failures(of: a) == 2, "the count outlives the backoff")
        backoff.recordFailure(of: b, now: Instant(nanoseconds: 2_000_000_000))
        backoff.recordFailure(of: c, now: Instant(nanoseconds: 3_000_000_000))
        #expect(backoff.count == 2)
        #expect(backoff.failures(of: a) == 0, "a failed last longest ago")
        backoff.forget(b)
        #expect(backoff.failures(of: b) == 0 && backoff.count == 1)
    }

    @Test func aNewPolicyAdvertisesAndHoldsNothing() {
        let policy = AdmissionPolicy()
        #expect(policy.isAdvertising)
        #expect(policy.slotsInUse == 0 && policy.unauthenticatedCount == 0)
        #expect(policy.nextDeadline == nil && policy.openPrompt == nil && policy.linkedDevices.isEmpty)
    }
}
