import Handshake
import Sodium

/// A `ReplayMemory` on disk: an append-only journal of (sender key, timestamp) records, one
/// synced write per accepted message 1, read back at start.
///
/// File: the 8-byte magic `BSRPJ001`, then records of 56 bytes: the key (32), the timestamp
/// (u64, big-endian) and the first 16 bytes of BLAKE2b over both (a torn or damaged record is
/// told from a good one). Reading stops at the first record that is short or fails its check,
/// and cuts the file there, so that appends go on after the last good record. When the file
/// holds more than twice as many records as keys (and at least `compactAfter`), it is written
/// anew, one record per key (at most `capacity` keys, the newest kept), in one step a crash
/// cannot split (`JournalDisk.replace`).
///
/// After a crash at any instant, every timestamp whose `remember` returned is recalled (or a
/// newer one for its key), and nothing is recalled that was never remembered (ReplayJournalTests,
/// a crash after every write and sync).
public final class ReplayJournal: ReplayMemory {
    public static let magic = Array("BSRPJ001".utf8)
    public static let recordSize = 56

    public let capacity: Int
    private let compactAfter: Int
    private let disk: any JournalDisk
    private let name: String
    private var newest: [[UInt8]: UInt64] = [:]
    private var records = 0
    /// A `remember` failed part-way: the file may end in a torn record, to be cut off before
    /// the next one is appended (else reading would stop at it and lose every later record).
    private var torn = false
    public let recalled: [ReplayMemoryEntry]
    /// Bytes cut from the end of the file at start (a record torn by a crash, or damage).
    public let cutBytes: Int

    /// Opens the journal `name` on `disk`, creating it if there is none.
    public init(disk: any JournalDisk, name: String, capacity: Int = 4096, compactAfter: Int = 1024) throws(ReplayMemoryFailure) {
        self.disk = disk
        self.name = name
        self.capacity = max(1, capacity)
        self.compactAfter = max(1, compactAfter)
        guard let bytes = try disk.read(name), bytes.count >= Self.magic.count, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            // None yet, or not even its magic survived (a crash right after it was created).
            try disk.replace(name, with: Self.magic)
            recalled = []
            cutBytes = 0
            return
        }
        var offset = Self.magic.count
        while offset + Self.recordSize <= bytes.count, let entry = Self.decode(bytes[offset..<(offset + Self.recordSize)]) {
            if entry.timestamp > newest[entry.key, default: 0] { newest[entry.key] = entry.timestamp }
            records += 1
            offset += Self.recordSize
        }
        cutBytes = bytes.count - offset
        if cutBytes > 0 {
            try disk.truncate(name, to: offset)
            try disk.sync(name)
        }
        recalled = newest.map { ReplayMemoryEntry(key: $0.key, timestamp: $0.value) }.sorted { $0.timestamp < $1.timestamp }
    }

    /// How many keys the journal holds.
    public var count: Int { newest.count }

    public func remember(key: [UInt8], timestamp: UInt64) throws(ReplayMemoryFailure) {
        do {
            if torn {
                try disk.truncate(name, to: Self.magic.count + records * Self.recordSize)
                torn = false
            }
            try disk.append(name, Self.encode(key: key, timestamp: timestamp))
            try disk.sync(name)
        } catch {
            torn = true
            throw error
        }
        records += 1
        if timestamp > newest[key, default: 0] { newest[key] = timestamp }
        if records >= compactAfter, records > 2 * newest.count || newest.count > capacity { try compact() }
    }

    /// Writes the journal anew: one record per key, the newest `capacity` keys.
    private func compact() throws(ReplayMemoryFailure) {
        let kept = newest.sorted { $0.value > $1.value }.prefix(capacity)
        var contents = Self.magic
        for (key, timestamp) in kept { contents += Self.encode(key: key, timestamp: timestamp) }
        try disk.replace(name, with: contents)
        newest = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        records = newest.count
    }

    static func encode(key: [UInt8], timestamp: UInt64) -> [UInt8] {
        var record = Array((key + [UInt8](repeating: 0, count: 32)).prefix(32))   // (an X25519 key: 32 bytes)
        record += (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * $0)) }
        record += check(record)
        return record
    }

    static func decode(_ record: ArraySlice<UInt8>) -> ReplayMemoryEntry? {
        let body = Array(record.prefix(40))
        guard record.count == recordSize, Array(record.suffix(16)) == check(body) else { return nil }
        let timestamp = body[32...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return ReplayMemoryEntry(key: Array(body[..<32]), timestamp: timestamp)
    }

    private static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: 16)
        hash.update(body)
        return hash.finalize()
    }
}
