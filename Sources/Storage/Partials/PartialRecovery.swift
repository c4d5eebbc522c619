import Durable
import Pipeline
import Transfer

/// What a receiver finds of its partial files at start (`DirectoryFileStore.recoverPartials`):
/// each record that reads, is not older than `lifetime` and whose data holds the bytes it claims,
/// hashing to its prefix hash, is a partial to resume (its data cut back to those bytes); every
/// other temporary and record of this receiver is removed, except folders kept with a journal
/// (`TreeRecovery` looks at those).
public struct PartialRecovery {
    let folder: any PartialFolder
    /// Seconds a record is kept after it was written.
    let lifetime: UInt64
    let makeHasher: () -> any ContentHasher

    public init(folder: any PartialFolder, lifetime: UInt64, makeHasher: @escaping () -> any ContentHasher) {
        self.folder = folder
        self.lifetime = lifetime
        self.makeHasher = makeHasher
    }

    /// Bytes hashed at a time.
    static let readSize = 65_536

    /// The partials found; `removed` counts the temporaries and records removed (a partial file
    /// and its record count two).
    public func run() -> Recovered<RecoveredPartial> {
        var outcome = Recovered<RecoveredPartial>()
        let names = folder.ownNames()
        var kept: Set<String> = []
        let expiry = Expiry(lifetime: lifetime, now: folder.secondsSinceEpoch())
        for record in names {
            guard let data = TemporaryNames.data(forRecord: record) else { continue }
            // A folder's journal and its staging folder are `TreeRecovery`'s.
            if (try? folder.read(record, at: 0, count: TreeJournal.magic.count)) == TreeJournal.magic {
                folder.closeFile(record)
                kept.formUnion([data, record])
            } else if let found = recover(data: data, record: record, expiry: expiry) {
                outcome.found.append(found)
                kept.formUnion([data, record])
            }
        }
        for name in names where !kept.contains(name) {
            folder.remove(name)
            outcome.removed += 1
        }
        if outcome.removed > 0 { try? folder.syncFolder() }
        return outcome
    }

    private func recover(data: String, record: String, expiry: Expiry) -> RecoveredPartial? {
        guard !expiry.passed(folder.modificationTime(record)) else { return nil }
        let bytes = try? folder.read(record, at: 0, count: PartialRecord.maxLength + 1)
        folder.closeFile(record)
        guard let bytes, let saved = PartialRecord(decoding: bytes), !expiry.passed(saved.savedAt),
              let length = try? folder.length(data), length >= saved.checkpoint.durable
        else { return nil }
        // Saved in the future (a clock set back): now, on disk too, so that it expires in time.
        if saved.savedAt > expiry.now {
            guard (try? folder.replace(record, with: PartialRecord(checkpoint: saved.checkpoint, savedAt: expiry.now).encoded())) != nil else { return nil }
        }
        var hasher = makeHasher()
        var offset: UInt64 = 0
        while offset < saved.checkpoint.durable {
            let count = Int(min(UInt64(Self.readSize), saved.checkpoint.durable - offset))
            guard let chunk = try? folder.read(data, at: offset, count: count), chunk.count == count else { return nil }
            hasher.update(chunk)
            offset += UInt64(count)
        }
        var prefix = hasher
        guard prefix.finalize() == saved.checkpoint.prefixHash else { return nil }
        if length > saved.checkpoint.durable {
            guard (try? folder.truncate(data, to: saved.checkpoint.durable)) != nil else { return nil }
        }
        folder.closeFile(data)
        return RecoveredPartial(checkpoint: saved.checkpoint,
                                file: DurableIncomingFile(folder: folder, data: data, name: saved.checkpoint.name),
                                hasher: hasher, age: expiry.age(of: saved.savedAt))
    }
}
