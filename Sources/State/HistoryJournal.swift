import Handshake
import Pipeline
import Sodium

/// A tool's history on disk: an append-only journal of `HistoryEntry` records, each synced as it
/// is written, bounded by `maxBytes`.
///
/// File: the 8-byte magic `BSHIST01`, then records: a length (u32, big-endian), the entry, and
/// the first 16 bytes of BLAKE2b over the entry. Reading stops at the first record that is short
/// or fails its check (a crash while appending), and the next append cuts the file there first.
/// Past `maxBytes` the newest entries that fit in half of it are written anew in one step a crash
/// cannot split (`JournalDisk.replace`). Chosen over SQLite: one write and one sync per file, no
/// dependency, and a torn tail costs at most the entry being written.
public final class HistoryJournal {
    public static let magic = Array("BSHIST01".utf8)
    static let checkLength = 16
    static let maxEntryLength = 8_192

    private let disk: any JournalDisk
    private let name: String
    public let maxBytes: Int
    /// Bytes of the file up to the end of its last good record.
    private var goodLength: Int
    private var fileLength: Int

    /// Opens the history `name` on `disk`, creating it if there is none.
    public init(disk: any JournalDisk, name: String, maxBytes: Int = 1 << 20) throws(ReplayMemoryFailure) {
        self.disk = disk
        self.name = name
        self.maxBytes = max(4_096, maxBytes)
        guard let bytes = try disk.read(name), Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            try disk.replace(name, with: Self.magic)
            goodLength = Self.magic.count
            fileLength = goodLength
            return
        }
        goodLength = Self.parse(bytes).end
        fileLength = bytes.count
    }

    /// Every entry that reads, oldest first.
    public func entries() throws(ReplayMemoryFailure) -> [HistoryEntry] {
        guard let bytes = try disk.read(name) else { return [] }
        return Self.parse(bytes).entries
    }

    /// Appends `entry` and syncs it: once this returns, a crash keeps it.
    public func append(_ entry: HistoryEntry) throws(ReplayMemoryFailure) {
        let record = Self.encode(entry)
        if fileLength + record.count > maxBytes {
            try compact(adding: entry)
            return
        }
        if fileLength > goodLength {
            try disk.truncate(name, to: goodLength)
            fileLength = goodLength
        }
        fileLength += record.count
        try disk.append(name, record)
        try disk.sync(name)
        goodLength = fileLength
    }

    /// Writes the newest entries that fit in half of `maxBytes`, `entry` last.
    private func compact(adding entry: HistoryEntry) throws(ReplayMemoryFailure) {
        var kept: [[UInt8]] = [Self.encode(entry)]
        var total = Self.magic.count + kept[0].count
        for old in try entries().reversed() {
            let record = Self.encode(old)
            guard total + record.count <= maxBytes / 2 else { break }
            kept.append(record)
            total += record.count
        }
        let contents = Self.magic + kept.reversed().flatMap { $0 }
        try disk.replace(name, with: contents)
        goodLength = contents.count
        fileLength = contents.count
    }

    static func parse(_ bytes: [UInt8]) -> (entries: [HistoryEntry], end: Int) {
        var entries: [HistoryEntry] = []
        var offset = magic.count
        while offset + 4 <= bytes.count {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let end = offset + 4 + length + checkLength
            guard length <= maxEntryLength, end <= bytes.count else { break }
            let body = Array(bytes[(offset + 4)..<(offset + 4 + length)])
            guard Array(bytes[(end - checkLength)..<end]) == check(body), let entry = try? decode(body) else { break }
            entries.append(entry)
            offset = end
        }
        return (entries, offset)
    }

    static func encode(_ entry: HistoryEntry) -> [UInt8] {
        var body: [UInt8] = [1, entry.direction.rawValue, entry.outcome.rawValue, entry.resumed ? 1 : 0]
        body.appendBigEndian(entry.time)
        body.appendBigEndian(entry.size)
        body.appendBigEndian(entry.airBytes ?? UInt64.max)
        for field in [entry.hash, Array(entry.peer.utf8), Array(entry.fingerprint.utf8), Array(entry.path.utf8),
                      Array(entry.transport.utf8), Array(entry.detail.utf8)] {
            let cut = Array(field.prefix(1_024))
            body.appendBigEndian(UInt16(cut.count))
            body += cut
        }
        var record: [UInt8] = []
        record.appendBigEndian(UInt32(body.count))
        return record + body + check(body)
    }

    static func decode(_ body: [UInt8]) throws(ByteReaderError) -> HistoryEntry? {
        var reader = ByteReader(body)
        guard try reader.readUInt8() == 1,
              let direction = HistoryEntry.Direction(rawValue: try reader.readUInt8()),
              let outcome = HistoryEntry.Outcome(rawValue: try reader.readUInt8()) else { return nil }
        let resumed = try reader.readUInt8() == 1
        let time = try reader.readUInt64(), size = try reader.readUInt64(), air = try reader.readUInt64()
        var fields: [[UInt8]] = []
        for _ in 0..<6 { fields.append(Array(try reader.readBytes(Int(try reader.readUInt16())))) }
        try reader.expectEnd()
        let text = fields.dropFirst().map { String(decoding: $0, as: UTF8.self) }
        return HistoryEntry(time: time, direction: direction, outcome: outcome, resumed: resumed, size: size,
                            airBytes: air == UInt64.max ? nil : air, hash: fields[0], peer: text[0], fingerprint: text[1],
                            path: text[2], transport: text[3], detail: text[4])
    }

    private static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: checkLength)
        hash.update(body)
        return hash.finalize()
    }
}
