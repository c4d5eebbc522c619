import Pipeline

/// Storage work a receiver that defers storage (`TransferReceiver.defersStorage`) hands its
/// driver instead of doing it on the spot: a file's commit, or a checkpoint of a file kept for a
/// resume. The driver (the pump, an edge) runs it off the pump's thread, on one serial worker per
/// connection, and hands the outcome back (`TransferReceiver.storageDone`). Meanwhile the
/// connection takes no further step of its own: what its sender sends waits, in order, until the
/// outcome is in (so every storage call of one connection happens in order, and never two at once).
///
/// Sendable by hand: while the work is out, nobody else calls the file it holds. A file being
/// committed has left the ledger's partials; a file being checkpointed stays held by its
/// connection (even past the link's end) and a connection that takes it over waits for the
/// outcome before it writes (`ReceiverLedger.filesOut`). The completed-transfers memory takes
/// calls from several threads (`CompletedMemory`).
public struct StorageWork: @unchecked Sendable {
    public enum Kind: Equatable, Sendable {
        /// A file whose bytes all arrived and whose hash matched: flush it and give it its name.
        case commitFile
        /// A file kept for a resume: flush what arrived and record how far it is durable.
        case checkpoint
    }

    private enum Job {
        /// Committed, then written down as completed in `memory`.
        case commit(memory: (any CompletedMemory)?, senderKey: [UInt8], id: TransferID, size: UInt64)
        case checkpoint(PartialCheckpoint)
    }

    /// Which work this is, to match its outcome (one connection's works are numbered in order).
    public let ticket: UInt64
    private let file: any IncomingFile
    private let job: Job

    public var kind: Kind {
        switch job {
        case .commit: .commitFile
        case .checkpoint: .checkpoint
        }
    }

    static func commit(_ file: any IncomingFile, size: UInt64, of key: PartialTransfers.Key,
                       rememberedIn memory: (any CompletedMemory)?, ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, file: file, job: .commit(memory: memory, senderKey: key.senderKey, id: key.id, size: size))
    }

    static func checkpoint(_ file: any IncomingFile, _ checkpoint: PartialCheckpoint, ticket: UInt64) -> StorageWork {
        StorageWork(ticket: ticket, file: file, job: .checkpoint(checkpoint))
    }

    /// Does the work, on the worker's thread (it may sync and take long). A commit that failed
    /// removes its file there too; a checkpoint that failed leaves the file to the pump.
    public func run() -> StorageOutcome {
        switch job {
        case .commit(let memory, let senderKey, let id, let size):
            let storedName: String
            do {
                storedName = try file.commit()
            } catch {
                file.discard()
                return StorageOutcome(ticket: ticket, result: .failure(StorageError(adapting: error)))
            }
            // Best effort: if it is not kept, a restart before the sender hears `confirm` costs a copy.
            try? memory?.remember(.init(senderKey: senderKey, id: id, storedName: storedName, size: size))
            return StorageOutcome(ticket: ticket, result: .success(.committed(storedName: storedName)))
        case .checkpoint(let checkpoint):
            do {
                try file.checkpoint(checkpoint)
                return StorageOutcome(ticket: ticket, result: .success(.checkpointed))
            } catch {
                return StorageOutcome(ticket: ticket, result: .failure(StorageError(adapting: error)))
            }
        }
    }
}

/// How a `StorageWork` went: done (the name a committed file got), or what the storage said.
public struct StorageOutcome: Equatable, Sendable {
    public enum Done: Equatable, Sendable {
        case committed(storedName: String)
        case checkpointed
    }

    public let ticket: UInt64
    public let result: Result<Done, StorageError>

    public init(ticket: UInt64, result: Result<Done, StorageError>) {
        self.ticket = ticket
        self.result = result
    }
}
