import DequeModule
import Pipeline

/// The files a receiver is receiving or was receiving when their links dropped, kept for a
/// resume and keyed by (authenticated sender key, transfer id), so that nobody but their sender
/// can continue them. Bounded twice: at most `maxPerSender` per sender (a new one removes that
/// sender's least recently active), and each one for `lifetime` after its last activity.
struct PartialTransfers {
    struct Key: Hashable {
        let senderKey: [UInt8]
        let id: TransferID
    }

    struct Partial {
        let name: String
        let size: UInt64?
        let file: any IncomingFile
        var hasher: any ContentHasher
        var received: UInt64 = 0
        var lastAck: UInt64 = 0
        var lastActivity: Instant
    }

    let lifetime: Duration
    let maxPerSender: Int
    private var table: [Key: Partial] = [:]

    init(lifetime: Duration, maxPerSender: Int) {
        self.lifetime = lifetime
        self.maxPerSender = max(1, maxPerSender)
    }

    var count: Int { table.count }

    subscript(key: Key) -> Partial? {
        get { table[key] }
        set { table[key] = newValue }
    }

    /// Starts keeping `partial`, first removing the sender's least recently active partials
    /// beyond `maxPerSender - 1`.
    mutating func insert(_ partial: Partial, for key: Key) {
        let own = table.filter { $0.key.senderKey == key.senderKey && $0.key != key }
        if own.count >= maxPerSender {
            for (old, _) in own.sorted(by: { $0.value.lastActivity < $1.value.lastActivity }).prefix(own.count - maxPerSender + 1) {
                discard(old)
            }
        }
        table[key] = partial
    }

    /// Stops keeping the partial of `key` without touching its file (the caller commits or discards it).
    mutating func remove(_ key: Key) -> Partial? { table.removeValue(forKey: key) }

    /// Removes the partial of `key` and its temporary file.
    mutating func discard(_ key: Key) {
        table.removeValue(forKey: key)?.file.discard()
    }

    /// Removes the partials (but `keep`) whose senders have been away longer than `lifetime`.
    mutating func expire(now: Instant, keeping keep: Key?) {
        for (key, partial) in table where key != keep && now.duration(since: partial.lastActivity) > lifetime {
            discard(key)
        }
    }

    mutating func discardAll() {
        for partial in table.values { partial.file.discard() }
        table.removeAll()
    }
}

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
