import Pipeline

/// `poll()`'s arithmetic for the real-time pump.
enum SocketPoll {
    /// `poll`'s timeout: whole milliseconds, rounded up so that a deadline is never woken for early
    /// (a deadline in the distant future waits the longest `poll` takes, without overflow).
    static func milliseconds(_ duration: Duration) -> Int32 {
        let nanoseconds = max(duration.nanoseconds, 0)
        let (whole, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return Int32(clamping: whole + (rest > 0 ? 1 : 0))
    }
}
