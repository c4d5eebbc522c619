import DequeModule
import Pipeline
import Synchronization

/// One direction of a `MemoryTransportPair`: a bounded FIFO of datagrams whose `send` suspends
/// while it is full and whose `receive` suspends while it is empty.
final class DatagramChannel: Sendable {
    private struct Waiter<Value: Sendable>: Sendable {
        var id: UInt64
        var continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var queue: Deque<[UInt8]> = []
        var receivers: Deque<Waiter<[UInt8]>> = []
        var senders: Deque<(waiter: Waiter<Void>, datagram: [UInt8])> = []
        var closed = false
        var nextID: UInt64 = 0

        /// The oldest datagram; a sender waiting for room gets its datagram queued, and is returned to be woken.
        mutating func takeNext() -> ([UInt8], CheckedContinuation<Void, any Error>?) {
            let datagram = queue.removeFirst()
            guard let sender = senders.popFirst() else { return (datagram, nil) }
            queue.append(sender.datagram)
            return (datagram, sender.waiter.continuation)
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Datagrams queued, not yet received.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    func send(_ datagram: [UInt8]) async throws {
        enum Outcome { case done, closed, handTo(CheckedContinuation<[UInt8], any Error>), wait(UInt64) }
        let outcome: Outcome = state.withLock { state in
            if state.closed { return .closed }
            if let receiver = state.receivers.popFirst() { return .handTo(receiver.continuation) }
            if state.queue.count < capacity { state.queue.append(datagram); return .done }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch outcome {
        case .done: return
        case .closed: throw TransportError.closed
        case let .handTo(receiver): receiver.resume(returning: datagram)
        case let .wait(id):
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Registration { case waiting, queued, handTo(CheckedContinuation<[UInt8], any Error>), failed(any Error) }
                    let registration: Registration = state.withLock { state in
                        if state.closed { return .failed(TransportError.closed) }
                        if Task.isCancelled { return .failed(CancellationError()) }
                        if let receiver = state.receivers.popFirst() { return .handTo(receiver.continuation) }
                        if state.queue.count < capacity {   // a receiver made room meanwhile
                            state.queue.append(datagram)
                            return .queued
                        }
                        state.senders.append((Waiter(id: id, continuation: continuation), datagram))
                        return .waiting
                    }
                    switch registration {
                    case .waiting: break
                    case .queued: continuation.resume()
                    case let .handTo(receiver):
                        receiver.resume(returning: datagram)
                        continuation.resume()
                    case let .failed(error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.senders.firstIndex(where: { $0.waiter.id == id }) else { return nil }
                    return state.senders.remove(at: index).waiter.continuation
                }
                removed?.resume(throwing: CancellationError())
            }
        }
    }

    func receive() async throws -> [UInt8] {
        enum Outcome { case datagram([UInt8], CheckedContinuation<Void, any Error>?), closed, wait(UInt64) }
        let outcome: Outcome = state.withLock { state in
            if state.closed { return .closed }
            if !state.queue.isEmpty {
                let (datagram, woken) = state.takeNext()
                return .datagram(datagram, woken)
            }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch outcome {
        case .closed: throw TransportError.closed
        case let .datagram(datagram, woken):
            woken?.resume()
            return datagram
        case let .wait(id):
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                    enum Registration { case waiting, ready([UInt8], CheckedContinuation<Void, any Error>?), failed(any Error) }
                    let registration: Registration = state.withLock { state in
                        if state.closed { return .failed(TransportError.closed) }
                        if Task.isCancelled { return .failed(CancellationError()) }
                        if !state.queue.isEmpty {   // a sender delivered meanwhile
                            let (datagram, woken) = state.takeNext()
                            return .ready(datagram, woken)
                        }
                        state.receivers.append(Waiter(id: id, continuation: continuation))
                        return .waiting
                    }
                    switch registration {
                    case .waiting: break
                    case let .ready(datagram, woken):
                        woken?.resume()
                        continuation.resume(returning: datagram)
                    case let .failed(error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                let removed = state.withLock { state -> CheckedContinuation<[UInt8], any Error>? in
                    guard let index = state.receivers.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.receivers.remove(at: index).continuation
                }
                removed?.resume(throwing: CancellationError())
            }
        }
    }

    /// The next datagram (waiting for one) and every other one queued behind it, in order; the
    /// senders waiting for room get it.
    func receiveAvailable() async throws -> [[UInt8]] {
        var datagrams = [try await receive()]
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            var woken: [CheckedContinuation<Void, any Error>] = []
            while !state.queue.isEmpty {
                let (datagram, sender) = state.takeNext()
                datagrams.append(datagram)
                if let sender { woken.append(sender) }
            }
            return woken
        }
        for sender in woken { sender.resume() }
        return datagrams
    }

    /// Fails every pending and later call with `TransportError.closed`; drops what is queued.
    func close() {
        let (receivers, senders) = state.withLock { state in
            state.closed = true
            state.queue.removeAll()
            defer { state.receivers.removeAll(); state.senders.removeAll() }
            return (state.receivers.map(\.continuation), state.senders.map(\.waiter.continuation))
        }
        for receiver in receivers { receiver.resume(throwing: TransportError.closed) }
        for sender in senders { sender.resume(throwing: TransportError.closed) }
    }
}
