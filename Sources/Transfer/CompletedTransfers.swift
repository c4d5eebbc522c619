import DequeModule

/// Transfers a receiver completed, remembered (the newest `capacity`) so that a sender whose
/// `confirm` was lost with the link gets it again instead of sending the file twice.
struct CompletedTransfers {
    struct Completed {
        let storedName: String
        let size: UInt64
    }

    let capacity: Int
    private var table: [PartialTransfers.Key: Completed] = [:]
    private var order: Deque<PartialTransfers.Key> = []

    init(capacity: Int = 256) { self.capacity = max(1, capacity) }

    subscript(key: PartialTransfers.Key) -> Completed? { table[key] }

    mutating func remember(_ done: Completed, for key: PartialTransfers.Key) {
        if table.updateValue(done, forKey: key) == nil { order.append(key) }
        if order.count > capacity, let oldest = order.popFirst() { table[oldest] = nil }
    }
}
