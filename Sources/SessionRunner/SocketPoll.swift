import Pipeline

/// `poll()`'s arithmetic for the real-time pump.
enum SocketPoll {
    /// `poll`'s timeout: whole milliseconds, rounded up so that a deadline is never woken for early.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let nanoseconds = max(duration.nanoseconds, 0)
        return Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
    }
}
