@preconcurrency import Dispatch
import Synchronization

/// Awaits readability/writability of non-blocking fds with one-shot DispatchSources; `cancelAll()`
/// wakes every waiter (used when a link closes).
public final class FDWaiter: Sendable {
    private struct State {
        var cancelled = false
        var sources: [Int: any DispatchSourceProtocol] = [:]
        var next = 0
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "blesend.fdwaiter")

    /// Returns when `fd` is ready, or when cancelled (then `isCancelled` is true).
    public init() {}

    public func wait(fd: Int32, forWriting: Bool) async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            let source: any DispatchSourceProtocol = forWriting
                ? DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
                : DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            let id: Int? = state.withLock { s in
                if s.cancelled { return nil }
                s.next += 1
                s.sources[s.next] = source
                return s.next
            }
            guard let id else {
                cont.resume()
                return
            }
            source.setEventHandler { source.cancel() }
            source.setCancelHandler { [weak self] in
                _ = self?.state.withLock { $0.sources.removeValue(forKey: id) }
                cont.resume()
            }
            source.resume()
        }
    }

    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    public func cancelAll() {
        let sources = state.withLock { s -> [any DispatchSourceProtocol] in
            s.cancelled = true
            return Array(s.sources.values)
        }
        for s in sources { s.cancel() }
    }
}
