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

    /// Hands out `job` on `key`'s file, as the work `make` builds with its ticket.
    mutating func handOut(_ job: Job, of key: Key, _ make: (UInt64) -> StorageWork) {
        tickets += 1
        out = Out(ticket: tickets, key: key, job: job)
        made.append(make(tickets))
    }

    /// The work made since the last call, for the driver to run in order.
    mutating func take() -> [StorageWork] {
        defer { made.removeAll() }
        return made
    }

    /// The work out that `outcome` answers, no longer out; nil for a stale or foreign ticket.
    mutating func settle(_ outcome: StorageOutcome) -> Out? {
        guard let settled = out, settled.ticket == outcome.ticket else { return nil }
        out = nil
        return settled
    }
}
