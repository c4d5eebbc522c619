import CSocketCalls
import Glibc
import Pipeline
import Synchronization

/// A flag that a thread blocked in `poll()` sees at once: an eventfd that becomes readable when
/// the flag is raised. A driver polls `fd` beside its sockets; whoever must stop it (the
/// transport's `close()`, a cancelled task) calls `raise(_:)`. The first reason raised sticks.
public final class WakeSignal: Sendable {
    /// Why the driver was woken.
    public enum Reason: Int, Sendable, Equatable {
        /// The transport closed (or lost) its link.
        case closed = 1
        /// The task waiting for the driver was cancelled.
        case cancelled = 2
    }

    /// Readable once the signal is raised; stays readable (nobody drains it).
    public let fd: Int32
    private let reason = Atomic<Int>(0)

    /// Nil when the kernel refuses an eventfd (descriptor limit).
    public init?() {
        let fd = blesend_eventfd_nonblocking()
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    /// Raises the flag (once; later calls keep the first reason) and wakes a `poll` on `fd`.
    public func raise(_ why: Reason) {
        guard reason.compareExchange(expected: 0, desired: why.rawValue, ordering: .sequentiallyConsistent).exchanged else { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, $0.count) }
    }

    /// The reason raised, if any (no system call).
    public var raised: Reason? { Reason(rawValue: reason.load(ordering: .sequentiallyConsistent)) }

    deinit { Glibc.close(fd) }
}

extension WakeSignal: CloseAlarm {
    public func raiseClosed() { raise(.closed) }
}
