import Pipeline

/// The retransmission timeout of RFC 6298 §2 (SRTT, RTTVAR, RTO with clock granularity
/// G = 1 ms), clamped to [minimum, maximum], with the backoff of §5.5: doubled at most once per
/// round of expiries. Times are nanoseconds.
///
/// Karn's rule (no samples from retransmitted frames) is the caller's: it only hands in samples
/// of frames sent once.
struct RTTEstimator {
    /// SRTT; nil until the first sample.
    private(set) var smoothedRTT: Int64?
    /// RTTVAR.
    private(set) var rttVariance: Int64 = 0
    /// RTO.
    private(set) var rto: Int64
    let minimumRTO: Int64
    let maximumRTO: Int64
    /// When the RTO was last doubled; nil after a sample.
    private var lastBackoff: Instant?

    /// `initial`, `minimum` and `maximum` as clamped by `LinkConfiguration.clamped`.
    init(initial: Duration, minimum: Duration, maximum: Duration) {
        rto = initial.nanoseconds
        minimumRTO = minimum.nanoseconds
        maximumRTO = maximum.nanoseconds
    }

    /// The current RTO.
    var timeout: Duration { .nanoseconds(rto) }

    /// SRTT, once measured.
    var smoothed: Duration? { smoothedRTT.map { .nanoseconds($0) } }

    /// Takes one round-trip sample (negative counts as zero): RFC 6298 §2.2 for the first,
    /// §2.3 after, then RTO = SRTT + max(G, 4 RTTVAR), clamped. Ends a backoff.
    mutating func addSample(_ sample: Int64) {
        let r = max(sample, 0)
        if let srtt = smoothedRTT {
            rttVariance = (3 * rttVariance + abs(srtt - r)) / 4
            smoothedRTT = (7 * srtt + r) / 8
        } else {
            smoothedRTT = r
            rttVariance = r / 2
        }
        let srtt = smoothedRTT ?? r
        let candidate = srtt + max(1_000_000, 4 * rttVariance)
        rto = min(max(candidate, minimumRTO), maximumRTO)
        lastBackoff = nil
    }

    /// A retransmission timer expired at `now` for a frame last sent at `lastSent`: doubles the
    /// RTO (up to the maximum) unless the frame was sent before the last doubling, which its
    /// round already paid for. Returns whether it doubled.
    mutating func backOff(frameSentAt lastSent: Instant, now: Instant) -> Bool {
        if let lastBackoff, lastSent < lastBackoff { return false }
        rto = min(rto.multipliedReportingOverflow(by: 2).partialValue, maximumRTO)
        lastBackoff = now
        return true
    }
}
