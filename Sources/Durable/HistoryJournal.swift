import Handshake
import Pipeline
import Sodium

/// A tool's history on disk: `HistoryEntry` records in a `Journal` (magic `BSHIST01`), each
/// synced as it is written, bounded by `maxBytes` (the newest kept). Chosen over SQLite: one
/// write and one sync per file, no dependency, and a torn tail costs at most the entry being
/// written.
public final class HistoryJournal {
    public static let magic = Array("BSHIST01".utf8)
    private let journal: Journal

    /// Opens the history `name` on `disk`, creating it if there is none.
    public init(disk: any DurableDisk, name: String, maxBytes: UInt64 = 1 << 20) throws(StorageError) {
        (journal, _) = try Journal.open(disk: disk, name: name, magic: Self.magic, maxBytes: maxBytes)
    }

    /// Every entry that reads, oldest first.
    public func entries() throws(StorageError) -> [HistoryEntry] {
        try journal.records().compactMap { try? Self.decode($0) }
    }

    /// Appends `entry` and syncs it: once this returns, a crash keeps it.
    public func append(_ entry: HistoryEntry) throws(StorageError) {
        try journal.append(Self.encode(entry))
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
        return body
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
}
