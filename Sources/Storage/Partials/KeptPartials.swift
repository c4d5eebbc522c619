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

extension PartialFolder {
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
