/// Whether kept state has outlived its lifetime, judged from a time on disk: a record's `savedAt`
/// or a file's modification time, in seconds since 1970. A time in the future (a clock set back,
/// or wrong when it was written) counts as now, and whoever finds one writes `now` in its place
/// (`TreeJournal.compact`, `PartialRecovery`): state is never kept for good by a wrong clock.
public struct Expiry: Sendable {
    public let lifetime: UInt64
    public let now: UInt64

    public init(lifetime: UInt64, now: UInt64) {
        self.lifetime = lifetime
        self.now = now
    }

    /// Whether state last saved at `time` has expired; nil (no time known) has not.
    public func passed(_ time: UInt64?) -> Bool {
        guard let time, time < now else { return false }
        return now - time > lifetime
    }

    /// How long ago `time` was (zero for a time in the future).
    public func age(of time: UInt64) -> Duration {
        .seconds(Int64(clamping: now - min(time, now)))
    }
}
