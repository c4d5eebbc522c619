/// Which of the receiver's calls to bluetoothd run now (issue 31). Each may take seconds (a D-Bus
/// call waits up to 5–6 s for its answer), so they run side by side, up to `concurrency` at once,
/// the others in the order they came. A call about a link that a call running or waiting already
/// covers (the same `key`) is not added again, and at most `capacity` calls wait: beyond them a
/// call is turned away, and its caller says so. Pure: `PeripheralCalls` runs what it decides.
struct ChoreSchedule<Job> {
    enum Decision: Equatable {
        /// Run it now; tell `finished` when it is done.
        case start
        /// It waits; `finished` hands it out in turn.
        case wait
        /// A call with the same key runs or waits already: dropped.
        case covered
        /// `capacity` calls wait already: dropped.
        case full
    }

    let concurrency: Int
    let capacity: Int
    private(set) var running = 0
    private var waiting: [(job: Job, key: String?)] = []
    /// The keys of the calls running or waiting (no two share one).
    private var keys: Set<String> = []

    init(concurrency: Int, capacity: Int) {
        self.concurrency = max(concurrency, 1)
        self.capacity = max(capacity, 0)
    }

    mutating func add(_ job: Job, key: String?) -> Decision {
        if let key, keys.contains(key) { return .covered }
        if running < concurrency {
            running += 1
            if let key { keys.insert(key) }
            return .start
        }
        guard waiting.count < capacity else { return .full }
        waiting.append((job, key))
        if let key { keys.insert(key) }
        return .wait
    }

    /// The call with `key` is done: the next waiting call to start now (running from here on), if any.
    mutating func finished(key: String?) -> (job: Job, key: String?)? {
        if let key { keys.remove(key) }
        guard waiting.isEmpty else { return waiting.removeFirst() }
        running = max(running - 1, 0)
        return nil
    }
}
