import Pipeline

/// Storage work a receiver that defers storage (`TransferReceiver.defersStorage`) hands its
/// driver instead of doing it on the spot: a file's commit, a checkpoint of a file kept for a
/// resume, a folder made inside a sent folder, a sent folder's commit. The driver (the pump, an edge) runs it off the pump's thread, on one serial worker per
/// connection, and hands the outcome back (`TransferReceiver.storageDone`). Meanwhile the
/// connection takes no further step of its own: what its sender sends waits, in order, until the
/// outcome is in (so every storage call of one connection happens in order, and never two at once).
///
/// Sendable by hand: while the work is out, nobody else calls the file it holds. A file or folder
/// being committed has left the ledger; a file being checkpointed stays held by its connection
/// (even past the link's end), and a connection that takes it over waits for the outcome before
/// it writes (`ReceiverLedger.itemsOut`). A folder takes one caller at a time by itself (the
/// worker makes a folder in it while another connection of its sender may place files there);
/// the completed-transfers memory takes calls from several threads (`CompletedMemory`).
public struct StorageWork: @unchecked Sendable {
    public enum Kind: Equatable, Sendable {
        /// A file whose bytes all arrived and whose hash matched: flush it and give it its name.
        case commitFile
        /// A file kept for a resume: flush what arrived and record how far it is durable.
        case checkpoint
        /// A folder inside a sent folder: make it (and sync its entry).
        case makeFolder
        /// A sent folder whose items all arrived: flush it and move it into place.
        case commitFolder
    }

    private enum Job {
        /// Committed, then written down as completed in `memory` (as `size` bytes).
        case commit(any IncomingFile, size: UInt64, memory: (any CompletedMemory)?, key: PartialTransfers.Key)
        case checkpoint(any IncomingFile, PartialCheckpoint)
        case makeFolder(any IncomingTree, [String], id: TransferID)
        /// Committed, then written down as completed in `memory`.
        case commitFolder(any IncomingTree, memory: (any CompletedMemory)?, key: PartialTransfers.Key)
    }

    /// Which work this is, to match its outcome (one connection's works are numbered in order).
    public let ticket: UInt64
    private let job: Job

    public var kind: Kind {
        switch job {
        case .commit: .commitFile
        case .checkpoint: .checkpoint
        case .makeFolder: .makeFolder
        case .commitFolder: .commitFolder
        }
    }

    static func commit(_ file: any IncomingFile, size: UInt64, of key: PartialTransfers.Key,
                       rememberedIn memory: (any CompletedMemory)?, ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, job: .commit(file, size: size, memory: memory, key: key))
    }

    static func checkpoint(_ file: any IncomingFile, _ checkpoint: PartialCheckpoint, ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, job: .checkpoint(file, checkpoint))
    }

    static func makeFolder(_ components: [String], id: TransferID, in tree: any IncomingTree, ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, job: .makeFolder(tree, components, id: id))
    }

    static func commit(_ tree: any IncomingTree, of key: PartialTransfers.Key, rememberedIn memory: (any CompletedMemory)?,
                       ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, job: .commitFolder(tree, memory: memory, key: key))
    }

    /// Does the work, on the worker's thread (it may sync and take long). A commit that failed
    /// removes its file or folder there too; a checkpoint or a folder that failed is left to the pump.
    public func run() -> StorageOutcome {
        do {
            switch job {
            case .commit(let file, let size, let memory, let key):
                let storedName: String
                do { storedName = try file.commit() } catch {
                    file.discard()
                    throw error
                }
                // Best effort: if it is not kept, a restart before the sender hears `confirm` costs a copy.
                try? memory?.remember(.init(senderKey: key.senderKey, id: key.id, storedName: storedName, size: size))
                return StorageOutcome(ticket: ticket, result: .success(.committed(storedName: storedName)))
            case .checkpoint(let file, let checkpoint):
                try file.checkpoint(checkpoint)
            case .makeFolder(let tree, let components, let id):
                try tree.makeFolder(components, id: id)
            case .commitFolder(let tree, let memory, let key):
                let storedName: String
                do { storedName = try tree.commit() } catch {
                    tree.discard()
                    throw error
                }
                // Best effort, as for a file: if it is not kept, a restart before the sender hears
                // `confirm` makes its `commit` answered "no such tree" although the folder is in place.
                try? memory?.remember(.init(senderKey: key.senderKey, id: key.id, storedName: storedName, size: 0))
                return StorageOutcome(ticket: ticket, result: .success(.committed(storedName: storedName)))
            }
            return StorageOutcome(ticket: ticket, result: .success(.done))
        } catch {
            return StorageOutcome(ticket: ticket, result: .failure(StorageError(adapting: error)))
        }
    }
}

/// How a `StorageWork` went: done (the name a committed file got), or what the storage said.
public struct StorageOutcome: Equatable, Sendable {
    public enum Done: Equatable, Sendable {
        /// A file or folder committed, under the name it got.
        case committed(storedName: String)
        /// A checkpoint written, a folder made.
        case done
    }

    public let ticket: UInt64
    public let result: Result<Done, StorageError>

    public init(ticket: UInt64, result: Result<Done, StorageError>) {
        self.ticket = ticket
        self.result = result
    }
}
