import DequeModule
import Synchronization

/// The links a peripheral hands out, oldest first, and the `accept()` calls waiting for one. Once
/// it has failed or is closed, waiting and later calls end with that, after the links already queued.
/// At most `capacity` links wait (issue 31: a receiver whose accepting task stalls must not pile up
/// descriptors); a link beyond them is refused, and its offerer closes it.
final class AcceptQueue<Link: Sendable>: Sendable {
    private struct State {
        var links: Deque<Link> = []
        var waiters: Deque<CheckedContinuation<Link?, Never>> = []
        var failure: BlueZError?
        var closed = false
    }
    private let state = Mutex(State())
    private enum Now { case link(Link), over, wait }
    let capacity: Int

    /// 16 by default: the receiver's accepting task takes each link at once, so more than a few
    /// waiting means it is stuck.
    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
    }

    /// A new link: to the call that has waited longest, else queued. False when `capacity` links
    /// wait already: the link was not taken, and the caller closes it.
    func offer(_ link: Link) -> Bool {
        let taken = state.withLock { s -> (taken: Bool, waiter: CheckedContinuation<Link?, Never>?) in
            if let waiter = s.waiters.popFirst() { return (true, waiter) }
            guard s.links.count < capacity else { return (false, nil) }
            s.links.append(link)
            return (true, nil)
        }
        taken.waiter?.resume(returning: link)
        return taken.taken
    }

    /// The oldest link not yet handed out, waiting for one if needed. Throws the failure once
    /// `fail` was called, and `linkLost` once closed.
    func accept() async throws(BlueZError) -> Link {
        let link: Link? = await withCheckedContinuation { continuation in
            let now = state.withLock { s -> Now in
                if let link = s.links.popFirst() { return .link(link) }
                if s.failure != nil || s.closed { return .over }
                s.waiters.append(continuation)
                return .wait
            }
            switch now {
            case .link(let link): continuation.resume(returning: link)
            case .over: continuation.resume(returning: nil)
            case .wait: break
            }
        }
        guard let link else { throw state.withLock { $0.failure } ?? BlueZError.linkLost }
        return link
    }

    /// From now on `accept()` throws `error` (the first failure sticks).
    func fail(_ error: BlueZError) {
        let waiters = state.withLock { s -> Deque<CheckedContinuation<Link?, Never>> in
            guard s.failure == nil else { return [] }
            s.failure = error
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// From now on `accept()` throws `linkLost` (unless it failed before).
    func close() {
        let waiters = state.withLock { s -> Deque<CheckedContinuation<Link?, Never>> in
            s.closed = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }
}
