import Durable
import Pipeline
import Transfer

/// A partial file kept across runs, as `blerecv partials` shows it: its record, read but not
/// checked against its bytes (the receiver does that at start), and the bytes its file holds.
public struct KeptPartial: Sendable {
    public let record: PartialRecord
    /// The hidden temporary holding its bytes.
    public let data: String
    /// What the temporary holds now: at least `record.checkpoint.durable` unless it was damaged.
    public let bytesOnDisk: UInt64
}

/// A folder kept part-way across runs, as `blerecv partials` shows it: what its journal says,
/// not checked against the disk (the receiver does that at start).
public struct KeptFolder: Sendable {
    public let origin: TreeOrigin
    /// The top folder's name as reduced.
    public let name: String
    /// When its journal was last written.
    public let savedAt: UInt64
    /// Its files finished, and the bytes it holds: theirs, and those checkpointed of files part-way.
    public let files: Int
    public let bytes: UInt64
}

extension PartialFolder {
    /// This receiver's kept folders whose journals read, oldest first.
    public func keptFolders() -> [KeptFolder] {
        let kept = ownNames().compactMap { record -> KeptFolder? in
            guard TemporaryNames.data(forRecord: record) != nil else { return nil }
            defer { closeFile(record) }
            guard let contents = (try? TreeJournal.read(in: self, name: record))?.contents else { return nil }
            let finished = contents.finished.values.reduce(0) { $0 + $1.size }
            let partway = contents.partway.values.reduce(UInt64(0)) { total, record in
                guard case .checkpoint(_, _, _, _, let durable, _) = record else { return total }
                return total + durable
            }
            return KeptFolder(origin: contents.origin, name: contents.name, savedAt: contents.savedAt, files: contents.finished.count,
                              bytes: finished + partway)
        }
        return kept.sorted { $0.savedAt < $1.savedAt }
    }

    /// This receiver's kept partials whose records read, oldest first.
    public func keptPartials() -> [KeptPartial] {
        let kept = ownNames().compactMap { record -> KeptPartial? in
            guard let data = TemporaryNames.data(forRecord: record) else { return nil }
            let bytes = try? read(record, at: 0, count: PartialRecord.maxLength + 1)
            closeFile(record)
            guard let bytes, let saved = PartialRecord(decoding: bytes) else { return nil }
            let length = (try? length(data)) ?? 0
            closeFile(data)
            return KeptPartial(record: saved, data: data, bytesOnDisk: length)
        }
        return kept.sorted { $0.record.savedAt < $1.record.savedAt }
    }

    /// Removes every temporary and record of this receiver's (`blerecv partials --remove`);
    /// returns how many names went.
    @discardableResult
    public func removeOwnTemporaries() -> Int {
        let names = ownNames()
        for name in names { remove(name) }
        if !names.isEmpty { try? syncFolder() }
        return names.count
    }
}
