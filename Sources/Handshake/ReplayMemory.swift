#if canImport(Glibc)
import Glibc
#endif

/// Where a receiver keeps, across restarts, the newest message 1 timestamp it accepted from each
/// trusted sender key (docs/protocol.md §3, replay), so that a message 1 recorded before a
/// restart is refused after it. The receiver remembers a timestamp before it writes message 2:
/// `remember` must be durable when it returns (`ReplayJournal` has it on disk, synced).
public protocol ReplayMemory: AnyObject {
    /// What earlier runs remembered: the newest timestamp per key.
    var recalled: [ReplayMemoryEntry] { get }
    /// Remembers `timestamp` for `key` for good, or says why it could not.
    func remember(key: [UInt8], timestamp: UInt64) throws(ReplayMemoryFailure)
}

public struct ReplayMemoryEntry: Equatable, Hashable, Sendable {
    public let key: [UInt8]
    public let timestamp: UInt64

    public init(key: [UInt8], timestamp: UInt64) {
        self.key = key
        self.timestamp = timestamp
    }
}

/// Why a replay memory could not read or keep a timestamp: the step and the system's errno.
public struct ReplayMemoryFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Step: String, Sendable {
        case open, read, write, sync, rename, truncate
    }

    public let step: Step
    public let errno: Int32
    /// The file or folder the step was about.
    public let path: String

    public init(_ step: Step, errno: Int32, path: String) {
        self.step = step
        self.errno = errno
        self.path = path
    }

    public var description: String { "cannot \(step.rawValue) \(path): \(String(cString: strerror(errno)))" }
}
