import Handshake
import Pipeline
import Sodium

/// A `ReplayMemory` on disk: a `Journal` (magic `BSRPJ002`) of (sender key, timestamp) records,
/// one synced append per accepted message 1, read back at start.
///
/// Record: the key (32) and the timestamp (u64, big-endian). When the journal holds more than
/// twice as many records as keys (and at least `compactAfter`), it is written anew, one record
/// per key (at most `capacity` keys, the newest kept), in one step a crash cannot split.
/// A journal of the earlier fixed-size format (`BSRPJ001`) is read once and written anew.
///
/// After a crash at any instant, every timestamp whose `remember` returned is recalled (or a
/// newer one for its key), and nothing is recalled that was never remembered (ReplayJournalTests,
/// a crash after every write and sync).
public final class ReplayJournal: ReplayMemory {
    public static let magic = Array("BSRPJ002".utf8)
    /// A record on disk: its frame's length (4), key and timestamp (40), check (16).
    static let framedRecordSize = 4 + 40 + 16

    public let capacity: Int
    private let compactAfter: Int
    private let journal: Journal
    private var newest: [[UInt8]: UInt64] = [:]
    private var records = 0
    public let recalled: [ReplayMemoryEntry]
    /// Bytes past the last good record at start (a record torn by a crash, or damage).
    public let cutBytes: UInt64
    /// The file at start was of no known format, and was replaced by an empty journal.
    public let replacedUnreadable: Bool

    /// Opens the journal `name` on `disk`, creating it if there is none.
    public init(disk: any DurableDisk, name: String, capacity: Int = 4096, compactAfter: Int = 1024) throws(StorageError) {
        self.capacity = max(1, capacity)
        self.compactAfter = max(1, compactAfter)
        var newest: [[UInt8]: UInt64] = [:]
        var records = 0
        let found: Journal.Found
        if let legacy = try LegacyReplayJournal.read(disk: disk, name: name) {
            // Written anew in one step: a crash leaves the old file or the new one.
            for entry in legacy where entry.timestamp > newest[entry.key, default: 0] { newest[entry.key] = entry.timestamp }
            journal = try Journal.write(disk: disk, name: name, magic: Self.magic,
                                        records: newest.map { Self.encode(key: $0.key, timestamp: $0.value) })
            records = newest.count
            found = .read(cut: 0)
        } else {
            // Compaction keeps it under twice the keys' records (or `compactAfter` of them): a file
            // far longer is no journal of ours, and would only cost memory to read.
            let limit = UInt64(2 * (2 * self.capacity + self.compactAfter) * Self.framedRecordSize)
            (journal, found) = try Journal.open(disk: disk, name: name, magic: Self.magic, limit: limit) { body in
                guard let entry = Self.decode(body) else { return false }
                if entry.timestamp > newest[entry.key, default: 0] { newest[entry.key] = entry.timestamp }
                records += 1
                return true
            }
        }
        self.newest = newest
        self.records = records
        if case .read(let cut) = found { cutBytes = cut } else { cutBytes = 0 }
        replacedUnreadable = found == .replacedUnreadable
        recalled = newest.map { ReplayMemoryEntry(key: $0.key, timestamp: $0.value) }.sorted { $0.timestamp < $1.timestamp }
    }

    /// How many keys the journal holds.
    public var count: Int { newest.count }

    public func remember(key: [UInt8], timestamp: UInt64) throws(StorageError) {
        try journal.append(Self.encode(key: key, timestamp: timestamp))
        records += 1
        if timestamp > newest[key, default: 0] { newest[key] = timestamp }
        if records >= compactAfter, records > 2 * newest.count || newest.count > capacity { try compact() }
    }

    /// Writes the journal anew: one record per key, the newest `capacity` keys.
    private func compact() throws(StorageError) {
        let kept = newest.sorted { $0.value > $1.value }.prefix(capacity)
        try journal.rewrite(kept.map { Self.encode(key: $0.key, timestamp: $0.value) })
        newest = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        records = newest.count
    }

    static func encode(key: [UInt8], timestamp: UInt64) -> [UInt8] {
        var record = Array((key + [UInt8](repeating: 0, count: 32)).prefix(32))   // (an X25519 key: 32 bytes)
        record.appendBigEndian(timestamp)
        return record
    }

    static func decode(_ body: [UInt8]) -> ReplayMemoryEntry? {
        guard body.count == 40 else { return nil }
        return ReplayMemoryEntry(key: Array(body[..<32]), timestamp: body[32...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}

/// The replay journal's first format (`BSRPJ001`, up to 0.4.0): fixed 56-byte records, the key
/// (32), the timestamp (u64) and a BLAKE2b-128 of both. Read once, to be written anew.
enum LegacyReplayJournal {
    static let magic = Array("BSRPJ001".utf8)
    static let recordSize = 56
    /// Compaction kept it under twice 4096 keys' records; anything larger is not one.
    static let maxLength = 8 + 2 * 4096 * recordSize + 1024 * recordSize

    /// Its entries, or nil when `name` is no such journal.
    static func read(disk: any DurableDisk, name: String) throws(StorageError) -> [ReplayMemoryEntry]? {
        guard disk.exists(name), try disk.read(name, at: 0, count: magic.count) == magic else { return nil }
        let length = try disk.length(name)
        guard length <= UInt64(maxLength) else { return nil }
        let bytes = try disk.read(name, at: 0, count: Int(length))
        var entries: [ReplayMemoryEntry] = []
        var offset = magic.count
        while offset + recordSize <= bytes.count {
            let body = Array(bytes[offset..<(offset + 40)])
            guard Array(bytes[(offset + 40)..<(offset + recordSize)]) == RecordFrame.check(body),
                  let entry = ReplayJournal.decode(body) else { break }
            entries.append(entry)
            offset += recordSize
        }
        return entries
    }
}
