import Handshake
import Sodium

/// An append-only file of records, each synced as it is written, bounded by `maxBytes`: what the
/// history and the completed-transfers memory keep on disk.
///
/// File: an 8-byte magic of the caller's, then records: a length (u32, big-endian), the record,
/// and the first 16 bytes of BLAKE2b over it. Reading stops at the first record that is short or
/// fails its check (a crash while appending), and the next append cuts the file there first.
/// Past `maxBytes` the newest records that fit in half of it are written anew in one step a crash
/// cannot split (`JournalDisk.replace`).
public final class RecordJournal {
    static let checkLength = 16
    public static let maxRecordLength = 8_192

    private let disk: any JournalDisk
    private let name: String
    private let magic: [UInt8]
    public let maxBytes: Int
    /// Bytes of the file up to the end of its last good record, and in all.
    private var goodLength: Int
    private var fileLength: Int

    /// Opens `name` on `disk`, creating it if there is none (or if it does not start with `magic`).
    public init(disk: any JournalDisk, name: String, magic: [UInt8], maxBytes: Int) throws(ReplayMemoryFailure) {
        self.disk = disk
        self.name = name
        self.magic = magic
        self.maxBytes = max(4_096, maxBytes)
        guard let bytes = try disk.read(name), Array(bytes.prefix(magic.count)) == magic else {
            try disk.replace(name, with: magic)
            goodLength = magic.count
            fileLength = goodLength
            return
        }
        goodLength = Self.parse(bytes, after: magic.count).end
        fileLength = bytes.count
    }

    /// Every record that reads, oldest first.
    public func records() throws(ReplayMemoryFailure) -> [[UInt8]] {
        guard let bytes = try disk.read(name) else { return [] }
        return Self.parse(bytes, after: magic.count).records
    }

    /// Appends `record` (at most `maxRecordLength` bytes) and syncs it: once this returns, a
    /// crash keeps it.
    public func append(_ record: [UInt8]) throws(ReplayMemoryFailure) {
        let framed = Self.frame(record)
        if fileLength + framed.count > maxBytes {
            try compact(adding: framed)
            return
        }
        if fileLength > goodLength {
            try disk.truncate(name, to: goodLength)
            fileLength = goodLength
        }
        fileLength += framed.count
        try disk.append(name, framed)
        try disk.sync(name)
        goodLength = fileLength
    }

    /// Writes the newest records that fit in half of `maxBytes`, `framed` last.
    private func compact(adding framed: [UInt8]) throws(ReplayMemoryFailure) {
        var kept: [[UInt8]] = [framed]
        var total = magic.count + framed.count
        for old in try records().reversed() {
            let record = Self.frame(old)
            guard total + record.count <= maxBytes / 2 else { break }
            kept.append(record)
            total += record.count
        }
        let contents = magic + kept.reversed().flatMap { $0 }
        try disk.replace(name, with: contents)
        goodLength = contents.count
        fileLength = contents.count
    }

    static func parse(_ bytes: [UInt8], after start: Int) -> (records: [[UInt8]], end: Int) {
        var records: [[UInt8]] = []
        var offset = start
        while offset + 4 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let end = offset + 4 + length + checkLength
            guard length <= maxRecordLength, end <= bytes.count else { break }
            let body = Array(bytes[(offset + 4)..<(offset + 4 + length)])
            guard Array(bytes[(end - checkLength)..<end]) == check(body) else { break }
            records.append(body)
            offset = end
        }
        return (records, offset)
    }

    static func frame(_ body: [UInt8]) -> [UInt8] {
        var framed: [UInt8] = []
        framed.appendBigEndian(UInt32(body.count))
        return framed + body + check(body)
    }

    private static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: checkLength)
        hash.update(body)
        return hash.finalize()
    }
}
