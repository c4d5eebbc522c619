import Pipeline

/// When a partial file or an open folder last saw its sender, on this run's clock: `instant`, less
/// `idleBefore`, the time it had already waited when this run found it on disk (its record's age
/// at start). A monotonic clock begins near zero at boot, so that earlier time is kept beside the
/// instant rather than subtracted from it: a kept partial's lifetime counts from its last save,
/// not again from each start.
struct LastActivity: Comparable {
    let instant: Instant
    let idleBefore: Duration

    /// Activity now.
    static func at(_ now: Instant) -> LastActivity { LastActivity(instant: now, idleBefore: .zero) }

    /// Found at start (`now`) after waiting `age` on disk.
    static func found(at now: Instant, age: Duration) -> LastActivity { LastActivity(instant: now, idleBefore: max(.zero, age)) }

    /// How long it has waited by `now`.
    func idle(at now: Instant) -> Duration { now.duration(since: instant) + idleBefore }

    /// The earlier activity is the smaller.
    static func < (a: LastActivity, b: LastActivity) -> Bool { a.since < b.since }

    /// The activity's time on a signed clock (nanoseconds; before the run's zero it is negative).
    private var since: Int64 {
        Int64(clamping: instant.nanoseconds).subtractingReportingOverflow(idleBefore.nanoseconds).partialValue
    }
}
