import Dispatch
import Synchronization
import Transfer

/// One connection's storage worker: runs the `StorageWork` its session hands out (commits,
/// checkpoints, folders, with their syncs) on a serial queue of its own, in the order handed, off the pump's
/// thread, so that one sender's syncs never hold up another's datagrams. Each outcome waits here
/// for the pump (`takeOutcomes`), and `ring` wakes it (the connection's doorbell).
///
/// The session hands out one work at a time and takes no step until its outcome is in, so the
/// worker and the pump never call into that connection's files at once. What the connections
/// share (the store) must take calls from several workers and the pump at once.
final class StorageWorker: Sendable {
    private let queue: DispatchQueue
    private let outcomes = Mutex<[StorageOutcome]>([])
    private let ring: @Sendable () -> Void

    init(label: String, ring: @escaping @Sendable () -> Void) {
        queue = DispatchQueue(label: label)
        self.ring = ring
    }

    /// Runs `work` after what was handed before; its outcome waits for `takeOutcomes`.
    func run(_ work: StorageWork) {
        queue.async { [self] in
            let outcome = work.run()
            outcomes.withLock { $0.append(outcome) }
            ring()
        }
    }

    /// The outcomes in since the last call, in order.
    func takeOutcomes() -> [StorageOutcome] {
        outcomes.withLock { outcomes in
            defer { outcomes.removeAll() }
            return outcomes
        }
    }
}
