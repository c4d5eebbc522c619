import Pipeline

/// Storage work a receiver that defers storage (`TransferReceiver.defersStorage`) hands its
/// driver instead of doing it on the spot: the driver (the pump, an edge) runs it off the pump's
/// thread, on one serial worker per connection, and hands the outcome back
/// (`TransferReceiver.storageDone`). Meanwhile the connection takes no further step of its own:
/// what its sender sends waits, in order, until the outcome is in (so every storage call of one
/// connection happens in order, and never two at once).
///
/// Sendable by hand: the file it holds is reached by nobody else while the work is out (its
/// partial left the ledger when the work was made; it comes back as a completed transfer), and
/// the completed-transfers memory takes calls from several threads (`CompletedMemory`).
public struct StorageWork: @unchecked Sendable {
    public enum Kind: Equatable, Sendable {
        /// A file whose bytes all arrived and whose hash matched: flush it and give it its name.
        case commitFile
    }

    /// Which work this is, to match its outcome (one connection's works are numbered in order).
    public let ticket: UInt64
    public let kind: Kind
    private let file: any IncomingFile

    /// Where the file is written down as completed once stored (`ReceiverLedger.completedMemory`),
    /// and what it says.
    private let memory: (any CompletedMemory)?
    private let senderKey: [UInt8]
    private let id: TransferID
    private let size: UInt64

    init(ticket: UInt64, commit file: any IncomingFile, size: UInt64, of key: PartialTransfers.Key, rememberedIn memory: (any CompletedMemory)?) {
        self.ticket = ticket
        self.kind = .commitFile
        self.file = file
        self.memory = memory
        self.senderKey = key.senderKey
        self.id = key.id
        self.size = size
    }

    /// Does the work, on the worker's thread (it may sync and take long): the file is committed
    /// and written down as completed; a file whose commit failed is removed there too.
    public func run() -> StorageOutcome {
        let storedName: String
        do {
            storedName = try file.commit()
        } catch {
            file.discard()
            return StorageOutcome(ticket: ticket, result: .failure(StorageError(adapting: error)))
        }
        // Best effort: if it is not kept, a restart before the sender hears `confirm` costs a copy.
        try? memory?.remember(.init(senderKey: senderKey, id: id, storedName: storedName, size: size))
        return StorageOutcome(ticket: ticket, result: .success(storedName))
    }
}

/// How a `StorageWork` went: the name the file got, or what the storage said.
public struct StorageOutcome: Equatable, Sendable {
    public let ticket: UInt64
    public let result: Result<String, StorageError>

    public init(ticket: UInt64, result: Result<String, StorageError>) {
        self.ticket = ticket
        self.result = result
    }
}
