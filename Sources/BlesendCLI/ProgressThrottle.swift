/// When a plain progress line goes out away from a terminal (a pipe, `nohup`, the journal): each
/// time the file crosses another 10 % of its size, or 30 s after the last line, whichever comes
/// first; every 30 s when its size is not known (standard input). The line at 100 % goes out
/// once. The first report of a file only sets where it starts, so that a file resumed at 40 %
/// says 50 % next, not 10 %, 20 %, 30 % and 40 % at once. Bytes that go back (the same name sent
/// again, or started over) begin a new file.
struct ProgressThrottle: Sendable {
    /// A line each time the file crosses another this many percent.
    static let stepPercent = 10
    /// At most this long without a line while bytes move.
    static let interval: Duration = .seconds(30)

    private var lastStep: Int?
    private var lastAt: ContinuousClock.Instant?
    private var lastDone: UInt64 = 0
    /// The line at 100 % went out: nothing more for this file.
    private(set) var finished = false

    /// Whether to print a line now, with `done` of `total` bytes (total nil: unknown) at `now`.
    mutating func shouldPrint(done: UInt64, total: UInt64?, now: ContinuousClock.Instant) -> Bool {
        if done < lastDone { self = ProgressThrottle() }
        lastDone = done
        guard !finished else { return false }
        let step = Self.step(done: done, total: total)
        defer { if lastAt == nil { lastAt = now; lastStep = step } }
        if let total, done >= total {
            finished = true
            return true
        }
        guard let lastAt else { return false }
        let due = (step.map { $0 > (lastStep ?? -1) } ?? false) || now - lastAt >= Self.interval
        if due {
            self.lastAt = now
            lastStep = step
        }
        return due
    }

    /// The 10 % step `done` of `total` has reached (0 to 10); nil when the size is unknown.
    static func step(done: UInt64, total: UInt64?) -> Int? {
        guard let total, total > 0 else { return nil }
        return Int(min(1, Double(done) / Double(total)) * 100) / stepPercent
    }
}
