import Pipeline

/// An append-only file of records in the one format (`RecordFrame`) on a `DurableDisk`: each
/// record synced as it is appended, read back as a stream, a torn end cut off before the next
/// append. Every journal and record of durable state is one of these (a record file is a journal
/// rewritten whole).
public final class Journal {
    /// Bytes read at a time.
    static let readSize = 65_536

    private let disk: any DurableDisk
    public let name: String
    public let magic: [UInt8]
    /// Past this many bytes, an append first rewrites the journal with the newest records that
    /// fit in half of it; nil: no bound here (the owner compacts).
    public let maxBytes: UInt64?
    /// The end of the last good frame: where the next one goes.
    public private(set) var end: UInt64
    /// The file may go on past `end` (a torn frame, damage, a failed append): cut before appending.
    private var torn: Bool

    /// What `open` found.
    public enum Found: Equatable, Sendable {
        /// There was no such file: it was created, empty.
        case created
        /// The file did not start with the magic (another format, damage) or was far too long: it
        /// was replaced by an empty journal.
        case replacedUnreadable
        /// The file read up to `end`; `cut` bytes past it are damage or a torn append.
        case read(cut: UInt64)
    }

    /// A file longer than this is no journal this program wrote (each compacts or is bounded
    /// well below), and is replaced unread.
    public static let defaultLimit: UInt64 = 64 << 20

    /// Opens `name` on `disk` and calls `visit` with each record that reads, oldest first (a
    /// record `visit` refuses counts as damage: reading stops there). Creates the journal if
    /// there is none, and replaces a file that does not start with `magic` or is longer than
    /// `limit` (default: twice `maxBytes`, or `defaultLimit`).
    public static func open(disk: any DurableDisk, name: String, magic: [UInt8], maxBytes: UInt64? = nil, limit: UInt64? = nil,
                            visit: ([UInt8]) -> Bool = { _ in true }) throws(StorageError) -> (Journal, Found) {
        guard disk.exists(name) else {
            try disk.replace(name, with: magic)
            return (Journal(disk: disk, name: name, magic: magic, maxBytes: maxBytes, end: UInt64(magic.count), torn: false), .created)
        }
        let limit = limit ?? maxBytes.map { 2 * max(4_096, $0) } ?? defaultLimit
        guard try disk.length(name) <= limit, let scan = try scan(disk: disk, name: name, magic: magic, visit: visit) else {
            try disk.replace(name, with: magic)
            return (Journal(disk: disk, name: name, magic: magic, maxBytes: maxBytes, end: UInt64(magic.count), torn: false),
                    .replacedUnreadable)
        }
        let cut = scan.length - scan.end
        return (Journal(disk: disk, name: name, magic: magic, maxBytes: maxBytes, end: scan.end, torn: cut > 0), .read(cut: cut))
    }

    /// Creates the journal `name` (never over an existing file) holding `first`, synced with its
    /// folder entry; nothing is left behind when it fails.
    public static func create(disk: any DurableDisk, name: String, magic: [UInt8], first: [UInt8]) throws(StorageError) -> Journal {
        try disk.create(name)
        let journal = Journal(disk: disk, name: name, magic: magic, maxBytes: nil, end: 0, torn: false)
        do throws(StorageError) {
            try disk.write(name, magic, at: 0)
            journal.end = UInt64(magic.count)
            try journal.append(first)
            try disk.syncFolder()
        } catch {
            disk.remove(name)
            throw error
        }
        return journal
    }

    /// Writes the journal `name` anew holding `records`, in one step a crash cannot split.
    public static func write(disk: any DurableDisk, name: String, magic: [UInt8], records: [[UInt8]]) throws(StorageError) -> Journal {
        let journal = Journal(disk: disk, name: name, magic: magic, maxBytes: nil, end: 0, torn: false)
        try journal.rewrite(records)
        return journal
    }

    /// The journal `name` as `scan` read it, appended from `end`.
    public convenience init(disk: any DurableDisk, name: String, magic: [UInt8], end: UInt64) {
        self.init(disk: disk, name: name, magic: magic, maxBytes: nil, end: end, torn: true)
    }

    private init(disk: any DurableDisk, name: String, magic: [UInt8], maxBytes: UInt64?, end: UInt64, torn: Bool) {
        self.disk = disk
        self.name = name
        self.magic = magic
        self.maxBytes = maxBytes.map { max(4_096, $0) }
        self.end = end
        self.torn = torn
    }

    /// Reads `name` as a stream, calling `visit` with each record that reads: the good part's
    /// end and the file's length, or nil when the file does not start with `magic`.
    public static func scan(disk: any DurableDisk, name: String, magic: [UInt8],
                            visit: ([UInt8]) -> Bool) throws(StorageError) -> (end: UInt64, length: UInt64)? {
        let length = try disk.length(name)
        guard length >= UInt64(magic.count), try disk.read(name, at: 0, count: magic.count) == magic else { return nil }
        var reader = RecordFrameReader()
        var offset = UInt64(magic.count)
        while offset < length, !reader.stopped {
            let chunk = try disk.read(name, at: offset, count: Int(min(UInt64(readSize), length - offset)))
            guard !chunk.isEmpty else { break }
            reader.feed(chunk[...], visit)
            offset += UInt64(chunk.count)
        }
        return (UInt64(magic.count) + reader.consumed, length)
    }

    /// Every record that reads, oldest first.
    public func records() throws(StorageError) -> [[UInt8]] {
        var records: [[UInt8]] = []
        _ = try Self.scan(disk: disk, name: name, magic: magic) { records.append($0); return true }
        return records
    }

    /// Appends `record` (at most `RecordFrame.maxBodyLength` bytes) and syncs it: once this
    /// returns, a crash keeps it.
    public func append(_ record: [UInt8]) throws(StorageError) {
        let framed = RecordFrame.frame(record)
        if let maxBytes, end + UInt64(framed.count) > maxBytes {
            try rewrite(newestFitting: maxBytes / 2, last: record)
            return
        }
        if torn { try disk.truncate(name, to: end) }
        torn = true   // until the frame is synced whole
        try disk.write(name, framed, at: end)
        try disk.sync(name)
        torn = false
        end += UInt64(framed.count)
    }

    /// Writes the journal anew with `records`, in one step a crash cannot split.
    public func rewrite(_ records: [[UInt8]]) throws(StorageError) {
        let contents = magic + records.flatMap(RecordFrame.frame)
        try disk.replace(name, with: contents)
        end = UInt64(contents.count)
        torn = false
    }

    /// Rewrites with the newest records that fit in `budget` bytes, `last` after them.
    private func rewrite(newestFitting budget: UInt64, last: [UInt8]) throws(StorageError) {
        var kept: [[UInt8]] = [last]
        var total = UInt64(magic.count + RecordFrame.frame(last).count)
        for old in try records().reversed() {
            let size = UInt64(RecordFrame.frame(old).count)
            guard total + size <= budget else { break }
            kept.append(old)
            total += size
        }
        try rewrite(kept.reversed())
    }

    /// Lets go of the file, keeping it for a later run.
    public func close() { disk.closeFile(name) }

    /// Removes the file (not yet durable: `DurableDisk.syncFolder`).
    public func remove() { disk.remove(name) }
}
