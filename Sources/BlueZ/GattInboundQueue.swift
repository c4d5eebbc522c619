import DequeModule
import Pipeline
import Synchronization

/// The datagrams a GATT link received and not yet handed up, and the readers waiting for one.
/// Both of the link's inbound paths (its acquired socket, D-Bus) fill it.
final class GattInboundQueue: Sendable {
    private struct State {
        var closed = false
        var buffer: Deque<[UInt8]> = []
        var readers: Deque<CheckedContinuation<[UInt8], any Error>> = []
    }
    private let state = Mutex(State())

    /// Queues `datagrams` and hands the oldest to a waiting reader, if any. Returns the backlog
    /// before that reader took one (0 once closed: the datagrams are dropped).
    func append(_ datagrams: [[UInt8]]) -> Int {
        let (reader, first, backlog) = state.withLock { s -> (CheckedContinuation<[UInt8], any Error>?, [UInt8]?, Int) in
            guard !s.closed else { return (nil, nil, 0) }
            s.buffer.append(contentsOf: datagrams)
            let backlog = s.buffer.count
            guard !s.buffer.isEmpty, let reader = s.readers.popFirst() else { return (nil, nil, backlog) }
            return (reader, s.buffer.popFirst(), backlog)
        }
        if let reader, let first { reader.resume(returning: first) }
        return backlog
    }

    /// The oldest datagram, waiting for one. Throws `TransportError.closed` once closed and empty.
    func next() async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { (cont: CheckedContinuation<[UInt8], any Error>) in
            let result = state.withLock { s -> Result<[UInt8], any Error>? in
                if let d = s.buffer.popFirst() { return .success(d) }
                if s.closed { return .failure(TransportError.closed) }
                s.readers.append(cont)
                return nil
            }
            if let result { cont.resume(with: result) }
        }
    }

    /// Every datagram waiting, oldest first.
    func takeAll() -> Deque<[UInt8]> {
        state.withLock { s in
            defer { s.buffer.removeAll(keepingCapacity: true) }
            return s.buffer
        }
    }

    var count: Int { state.withLock { $0.buffer.count } }

    /// Fails every waiting reader; what is queued can still be taken.
    func close() {
        let readers = state.withLock { s -> Deque<CheckedContinuation<[UInt8], any Error>> in
            s.closed = true
            defer { s.readers.removeAll() }
            return s.readers
        }
        for r in readers { r.resume(throwing: TransportError.closed) }
    }
}
