import DequeModule
import Synchronization

/// Datagrams that arrived from the transport, waiting for the endpoint loop, which takes them
/// one at a time or gives up waiting at a deadline. Filled by a reading task; nudged when the
/// endpoint has an input.
final class Inbox: Sendable {
    private struct State {
        var queue: Deque<[UInt8]> = []
        var closed = false
        var waiter: CheckedContinuation<Item, Never>?
        var waiterID = 0
        /// Woken for another reason than a datagram (an input for the endpoint) while nobody waited.
        var nudged = false
    }

    enum Item: Sendable {
        case datagram([UInt8])
        case timeout
        case closed
    }

    private let state = Mutex(State())

    /// Adds datagrams in order; wakes the waiting loop once.
    func put(_ datagrams: [[UInt8]]) {
        guard let first = datagrams.first else { return }
        let waiter = state.withLock { s -> CheckedContinuation<Item, Never>? in
            if let waiter = s.waiter {
                s.waiter = nil
                s.queue.append(contentsOf: datagrams.dropFirst())
                return waiter
            }
            s.queue.append(contentsOf: datagrams)
            return nil
        }
        waiter?.resume(returning: .datagram(first))
    }

    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Item, Never>? in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: .closed)
    }

    /// Wakes the waiting loop for another reason than a datagram (an input for its endpoint): its
    /// wait ends as if it timed out; if nobody waits, the next wait does not.
    func nudge() {
        let waiter = state.withLock { s -> CheckedContinuation<Item, Never>? in
            guard let waiter = s.waiter else {
                s.nudged = true
                return nil
            }
            s.waiter = nil
            s.waiterID += 1
            return waiter
        }
        waiter?.resume(returning: .timeout)
    }

    /// A datagram already waiting, without suspending.
    func poll() -> Item? {
        state.withLock { s in
            if let next = s.queue.popFirst() { return .datagram(next) }
            return s.closed ? .closed : nil
        }
    }

    /// The next datagram, or `.timeout` after `timeout`, or `.closed`.
    func next(timeout: Duration) async -> Item {
        if let ready = poll() { return ready }
        let id = state.withLock { s -> Int? in
            if s.nudged {
                s.nudged = false
                return nil
            }
            s.waiterID += 1
            return s.waiterID
        }
        guard let id else { return .timeout }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate = state.withLock { s -> Item? in
                if let next = s.queue.popFirst() { return .datagram(next) }
                if s.closed { return .closed }
                if s.waiterID != id { return .timeout }
                if s.nudged {
                    s.nudged = false
                    return .timeout
                }
                s.waiter = continuation
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { s -> CheckedContinuation<Item, Never>? in
            guard s.waiterID == id else { return nil }
            s.waiterID += 1   // a late `next` setup for this id sees the timeout
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: .timeout)
    }
}
