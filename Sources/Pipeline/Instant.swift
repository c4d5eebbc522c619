/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
///
/// The protocol core never reads a clock: callers hand it the current `Instant`.
/// Tests drive time by hand; the CLI reads `CLOCK_MONOTONIC`.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public static let zero = Instant(nanoseconds: 0)
    /// Later than any instant a run reaches.
    public static let distantFuture = Instant(nanoseconds: .max)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `self` moved forward by `duration` (saturating; a negative duration moves back, stopping at zero).
    public func advanced(by duration: Duration) -> Instant {
        let delta = duration.nanoseconds
        if delta >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(delta))
            return Instant(nanoseconds: overflow ? .max : sum)
        }
        let back = UInt64(delta.magnitude)
        return Instant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
    }

    /// Time from `earlier` to `self` (zero if `earlier` is later).
    public func duration(since earlier: Instant) -> Duration {
        nanoseconds > earlier.nanoseconds ? .nanoseconds(Int64(clamping: nanoseconds - earlier.nanoseconds)) : .zero
    }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration as whole nanoseconds, clamped to `Int64`.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
