import Dispatch

/// A serial executor over a `DispatchQueue`, so an actor and the DispatchSource watching the D-Bus
/// socket share one thread of control (Linux Dispatch has no `DispatchSerialQueue`).
final class SerialQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unowned.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
