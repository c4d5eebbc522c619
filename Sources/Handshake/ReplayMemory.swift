import Pipeline

/// Where a receiver keeps, across restarts, the newest message 1 timestamp it accepted from each
/// trusted sender key (docs/protocol.md §3, replay), so that a message 1 recorded before a
/// restart is refused after it. The receiver remembers a timestamp before it writes message 2:
/// `remember` must be durable when it returns (`Durable.ReplayJournal` has it on disk, synced).
public protocol ReplayMemory: AnyObject {
    /// What earlier runs remembered: the newest timestamp per key.
    var recalled: [ReplayMemoryEntry] { get }
    /// Remembers `timestamp` for `key` for good, or says why it could not.
    func remember(key: [UInt8], timestamp: UInt64) throws(StorageError)
}

public struct ReplayMemoryEntry: Equatable, Hashable, Sendable {
    public let key: [UInt8]
    public let timestamp: UInt64

    public init(key: [UInt8], timestamp: UInt64) {
        self.key = key
        self.timestamp = timestamp
    }
}
