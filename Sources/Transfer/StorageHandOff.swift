/// One connection's storage work as it goes out (`StorageWork`) and comes back: at most one out
/// at a time, handed to the driver in order, and what its outcome settles.
struct StorageHandOff {
    typealias Key = PartialTransfers.Key

    /// What a work out is for, and what its outcome needs.
    enum Job {
        /// The file's `confirm` and events wait for it.
        case commit(name: String, size: UInt64, hash: [UInt8])
        /// The file is durable up to `durable` once it is in.
        case checkpoint(durable: UInt64)
        /// A folder item (`name` for people) of the open folder `tree`; `storedName` is its last component.
        case makeFolder(name: String, storedName: String)
        /// A sent folder's commit: `name` and its file count for people.
        case commitFolder(name: String, files: Int)

        /// What the ledger says of the item while this is out.
        var itemOut: ReceiverLedger.ItemWorkOut {
            switch self {
            case .commit(_, let size, _): .commit(size: size)
            case .checkpoint: .checkpoint
            case .makeFolder, .commitFolder: .folder
            }
        }
    }

    struct Out {
        let ticket: UInt64
        let key: Key
        let job: Job
    }

    /// Whether work goes out at all (else it runs on the spot).
    var defers = false
    /// The work out, until its outcome comes back.
    private(set) var out: Out?
    /// The file of the checkpoint out failed meanwhile (`FileReceiver.abandonCurrent`): it is
    /// removed, with this failure, once the outcome is in.
    var abandoned: FileFailure?
    /// Work made and not yet taken by the driver.
    private var made: [StorageWork] = []
    private var tickets: UInt64 = 0

    var isOut: Bool { out != nil }

    /// Hands out `job` on the item `key`, as the work `make` builds with its ticket; `ledger`
    /// knows the item is out (`ReceiverLedger.itemsOut`) until `settle`.
    mutating func handOut(_ job: Job, of key: Key, in ledger: ReceiverLedger, _ make: (UInt64) -> StorageWork) {
        tickets += 1
        out = Out(ticket: tickets, key: key, job: job)
        ledger.itemsOut[key] = job.itemOut
        made.append(make(tickets))
    }

    /// The work made since the last call, for the driver to run in order.
    mutating func take() -> [StorageWork] {
        defer { made.removeAll() }
        return made
    }

    /// The work out that `outcome` answers, no longer out (in `ledger` too); nil for a stale or
    /// foreign ticket.
    mutating func settle(_ outcome: StorageOutcome, in ledger: ReceiverLedger) -> Out? {
        guard let settled = out, settled.ticket == outcome.ticket else { return nil }
        out = nil
        ledger.itemsOut[settled.key] = nil
        return settled
    }
}
