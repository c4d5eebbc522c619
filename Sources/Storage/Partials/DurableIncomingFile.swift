import Durable
import Pipeline
import Transfer

/// One incoming file kept across runs: its bytes in a hidden temporary of the output folder,
/// its last checkpoint in a record beside it (`TemporaryNames`, `PartialRecord`).
///
/// The order of steps is what makes a power cut at any instant safe:
/// - a checkpoint syncs the data first, then replaces the record (written, synced, renamed, the
///   folder synced): a record never claims bytes that are not on disk;
/// - a commit removes the record and syncs the folder before the file gets its final name: after
///   a crash there is either a partial to resume or the stored file, never both (a resume would
///   store it a second time).
/// A restart that finds the data longer than its record says cuts it back (`PartialRecovery`).
public final class DurableIncomingFile: IncomingFile {
    private let folder: any PartialFolder
    public let data: String
    public let record: String
    /// The name it is stored under (a resume keeps the first offer's).
    private let name: String
    private var open = true

    /// The file whose bytes go to `data` in `folder` (a name `TemporaryNames` made, created
    /// already), to be stored as `name`.
    public init(folder: any PartialFolder, data: String, name: String) {
        self.folder = folder
        self.data = data
        self.record = TemporaryNames.record(for: data)
        self.name = name
    }

    public func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard open else { throw StorageError(.io, "file already closed") }
        try folder.write(data, bytes, at: offset)
    }

    public func checkpoint(_ checkpoint: PartialCheckpoint) throws {
        guard open else { throw StorageError(.io, "file already closed") }
        try folder.sync(data)
        try folder.replace(record, with: PartialRecord(checkpoint: checkpoint, savedAt: folder.secondsSinceEpoch()).encoded())
    }

    public func commit() throws -> String {
        guard open else { throw StorageError(.io, "file already closed") }
        open = false
        do {
            try folder.sync(data)
            folder.remove(record)
            try folder.syncFolder()
            let stored = try folder.commit(data, as: name)
            try folder.syncFolder()
            return stored
        } catch {
            folder.remove(data)
            folder.remove(record)
            throw error
        }
    }

    public func closeForResume() {
        guard open else { return }
        open = false
        folder.closeFile(data)
    }

    public func discard() {
        open = false
        folder.remove(data)
        folder.remove(record)
    }
}
