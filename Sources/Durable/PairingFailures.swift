import Pipeline

/// The sender's failed pairing attempts since its last success (`blesend pair`, docs/protocol.md
/// §9.5), on disk so that running `blesend pair` again does not skip the pause: one `Journal`
/// record (magic `BSPAIR01`) per failed attempt, its time (`u64`, seconds since 1970); emptied
/// by a success. Bounded: past `maxBytes` (4 KiB, the least a journal takes) the oldest go; a
/// long run of failures keeps the longest pause anyway.
public final class PairingFailures {
    public static let magic = Array("BSPAIR01".utf8)
    public static let name = "pairing-failures"
    private let journal: Journal
    /// The times of the failures since the last success, oldest first.
    public private(set) var times: [UInt64] = []

    public init(disk: any DurableDisk, maxBytes: UInt64 = 4_096) throws(StorageError) {
        var times: [UInt64] = []
        (journal, _) = try Journal.open(disk: disk, name: Self.name, magic: Self.magic, maxBytes: maxBytes) { body in
            guard body.count == 8 else { return false }
            times.append(body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            return true
        }
        self.times = times
    }

    /// A failed attempt at `time`, synced before this returns.
    public func failed(at time: UInt64) throws(StorageError) {
        var record: [UInt8] = []
        record.appendBigEndian(time)
        try journal.append(record)
        times.append(time)
    }

    /// A success: the count starts again.
    public func succeeded() throws(StorageError) {
        try journal.rewrite([])
        times = []
    }

    /// Seconds from `now` until the next attempt may start (0: at once): the pause after the
    /// failures so far (`PairingPause`), from the last one. A last failure in the future (a clock
    /// set back) counts from now.
    public static func wait(after times: [UInt64], now: UInt64, pause: (Int) -> Duration) -> UInt64 {
        guard let last = times.last else { return 0 }
        let end = min(last, now) + UInt64(pause(times.count).components.seconds)
        return end > now ? end - now : 0
    }
}
