import Pipeline
import Testing
@testable import BlueZ

/// When blerecv may register its GATT application afresh (issue 20: doing it under a live, silent
/// subscriber took bluetoothd 5.66 down): never while the peer's link is up, at most once a minute.
@Suite("Application renewal policy")
struct ApplicationRenewalPolicyTests {
    let t0 = Instant(nanoseconds: 5_000_000_000)

    @Test(arguments: [
        // (peer connected, seconds since the first call, expected second decision)
        (false, 1.0, ApplicationRenewalPolicy.Decision.skipTooSoon),
        (false, 59.9, .skipTooSoon),
        (false, 60.0, .renew),
        (false, 3600.0, .renew),
        (true, 120.0, .skipLinkUp),
    ])
    func aSecondRenewal(connected: Bool, after seconds: Double, want: ApplicationRenewalPolicy.Decision) {
        var policy = ApplicationRenewalPolicy()
        #expect(policy.decide(peerConnected: false, now: t0) == .renew)
        #expect(policy.decide(peerConnected: connected, now: t0.advanced(by: .milliseconds(Int64(seconds * 1000)))) == want)
    }

    @Test func aPeerStillConnectedIsNeverRenewedUnderAndDoesNotUseUpTheTurn() {
        var policy = ApplicationRenewalPolicy()
        #expect(policy.decide(peerConnected: true, now: t0) == .skipLinkUp)
        #expect(policy.decide(peerConnected: true, now: t0.advanced(by: .seconds(600))) == .skipLinkUp)
        // The skipped turns did not count as renewals: the first free moment renews.
        #expect(policy.decide(peerConnected: false, now: t0.advanced(by: .seconds(601))) == .renew)
    }
}
