import Pipeline

/// The files a receiver is receiving or was receiving when their links dropped, kept for a
/// resume and keyed by (authenticated sender key, transfer id), so that nobody but their sender
/// can continue them. Bounded three times: at most `maxPerSender` waiting per sender (a new one
/// removes that sender's least recently active), at most `maxTotal` waiting in all (a new one
/// removes the least recently active of anyone's), and each one for `lifetime` after its last
/// activity.
///
/// A partial that a live connection is receiving has that connection as its `holder`: expiry and
/// eviction pass it by (another connection's `linkLost` runs them), so at most one more per live
/// connection of a sender can exist than `maxPerSender`.
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
        /// The bytes its last `checkpoint` made durable.
        var checkpointed: UInt64 = 0
        var lastActivity: LastActivity
        /// The live connection writing it; nil while it waits for its sender to come back.
        var holder: LedgerHolder?
    }

    let lifetime: Duration
    let maxPerSender: Int
    let maxTotal: Int
    private var table: [Key: Partial] = [:]

    /// Partials waiting in all, of every sender, unless told otherwise.
    static let defaultMaxTotal = 64

    init(lifetime: Duration, maxPerSender: Int, maxTotal: Int = defaultMaxTotal) {
        self.lifetime = lifetime
        self.maxPerSender = max(1, maxPerSender)
        self.maxTotal = max(1, maxTotal)
    }

    var count: Int { table.count }

    subscript(key: Key) -> Partial? {
        get { table[key] }
        set { table[key] = newValue }
    }

    /// Starts keeping `partial`, first removing the sender's least recently active partials that
    /// no connection holds, beyond `maxPerSender - 1`.
    mutating func insert(_ partial: Partial, for key: Key) {
        let own = table.filter { $0.key.senderKey == key.senderKey && $0.key != key && $0.value.holder == nil }
        if own.count >= maxPerSender {
            for (old, _) in own.sorted(by: { $0.value.lastActivity < $1.value.lastActivity }).prefix(own.count - maxPerSender + 1) {
                discard(old)
            }
        }
        let waiting = table.filter { $0.key != key && $0.value.holder == nil }
        if waiting.count >= maxTotal {
            for (old, _) in waiting.sorted(by: { $0.value.lastActivity < $1.value.lastActivity }).prefix(waiting.count - maxTotal + 1) {
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

    /// Keeps the partial files found on disk at start (`now`), each waiting for its sender since
    /// its last save (`RecoveredPartial.age`).
    mutating func adopt(_ recovered: [RecoveredPartial], now: Instant) {
        for found in recovered {
            let point = found.checkpoint
            insert(.init(name: point.name, size: point.size, file: found.file, hasher: found.hasher, received: point.durable,
                         lastAck: point.durable, checkpointed: point.durable, lastActivity: .found(at: now, age: found.age), holder: nil),
                   for: Key(senderKey: point.senderKey, id: point.id))
        }
    }

    /// Removes the least recently active partial that no connection holds; its name, nil when there is none.
    mutating func discardLeastRecentlyActiveWaiting() -> String? {
        guard let oldest = table.filter({ $0.value.holder == nil }).min(by: { $0.value.lastActivity < $1.value.lastActivity }) else {
            return nil
        }
        discard(oldest.key)
        return oldest.value.name
    }

    /// Makes the bytes the partial of `key` holds durable (`IncomingFile.checkpoint`).
    mutating func checkpoint(_ key: Key) throws {
        guard let partial = table[key], let checkpoint = nextCheckpoint(key) else { return }
        try partial.file.checkpoint(checkpoint)
        checkpointed(key, at: checkpoint.durable)
    }

    /// The checkpoint `key`'s file is due (all it received so far), if it received anything since the last.
    func nextCheckpoint(_ key: Key) -> PartialCheckpoint? {
        guard let partial = table[key], partial.received > partial.checkpointed else { return nil }
        var prefix = partial.hasher
        return PartialCheckpoint(senderKey: key.senderKey, id: key.id, name: partial.name, size: partial.size,
                                 durable: partial.received, prefixHash: prefix.finalize())
    }

    /// `key`'s file is durable up to `durable` (its checkpoint was written).
    mutating func checkpointed(_ key: Key, at durable: UInt64) {
        guard let checkpointed = table[key]?.checkpointed else { return }
        table[key]?.checkpointed = max(checkpointed, durable)
    }

    /// The connection `holder` ended: what it was receiving is checkpointed and waits for a resume
    /// from `now`, unless it holds no byte yet (resuming it is the same as starting afresh). Not
    /// `except`, whose checkpoint is out on the connection's storage worker: it stays held until
    /// the outcome is in (then `release(_:heldBy:now:)`).
    mutating func release(heldBy holder: LedgerHolder, now: Instant, except: Key? = nil) {
        for (key, partial) in table where partial.holder == holder && key != except {
            if partial.received == 0 {
                discard(key)
            } else {
                // A failed checkpoint leaves the last one: a restart resumes from there.
                try? checkpoint(key)
                table[key]?.holder = nil
                table[key]?.lastActivity = .at(now)
            }
        }
    }

    /// The connection `holder` ended and `key`'s checkpoint, out when it did, is in: the file
    /// waits for a resume from `now` (unless another connection took it over meanwhile).
    mutating func release(_ key: Key, heldBy holder: LedgerHolder, now: Instant) {
        guard table[key]?.holder == holder else { return }
        table[key]?.holder = nil
        table[key]?.lastActivity = .at(now)
    }

    /// Removes the partials whose senders have been away longer than `lifetime`; never one that a
    /// live connection holds, however long ago its last byte came.
    mutating func expire(now: Instant) {
        for (key, partial) in table where partial.holder == nil && partial.lastActivity.idle(at: now) > lifetime {
            discard(key)
        }
    }

    /// The receiver stops: each partial is checkpointed and closed, kept for the next run where
    /// its store keeps files (`IncomingFile.close`); one that holds no byte is removed.
    mutating func closeAll() {
        for (key, partial) in table {
            if partial.received == 0 {
                partial.file.discard()
            } else {
                try? checkpoint(key)
                partial.file.closeForResume()
            }
        }
        table.removeAll()
    }

    mutating func discardAll() {
        for partial in table.values { partial.file.discard() }
        table.removeAll()
    }
}
