import DequeModule
import Glibc
import Pipeline
import Session
import Synchronization

/// Any transport that does not hand over its sockets (the in-memory pair, a `GattLink` reached by
/// D-Bus calls), as the real-time pump sees it: a reader task fills an inbound queue from
/// `receiveAvailable()`, a writer task sends what the pump queued, a batch at a time
/// (`send(contentsOf:)`), and both ring the connection's doorbell, which the pump polls with
/// everything else. At most `depth` datagrams wait for the writer: the endpoint keeps the rest
/// (back-pressure).
///
/// A datagram is stamped (its RTT sample starts) when the endpoint gives it, so over a transport
/// whose `send` takes time (a D-Bus `WriteValue` call) the depth is 1: a datagram is taken only
/// when the one before has left, as the async loop that preceded the pump did. In memory a send
/// takes no time and the depth is 32, which saves the pump a wake-up per datagram (a third of the
/// CPU per datagram in `blesend-bench runner`).
final class AsyncPort: PumpPort {
    let transport: any DatagramTransport
    /// Datagrams the writer may hold before the pump stops taking them from the endpoint.
    let depth: Int

    /// The depth for `transport`: see the type's comment.
    static func depth(for transport: any DatagramTransport) -> Int {
        transport.transportDescription.kind == .memory ? 32 : 1
    }

    private struct State {
        var inbound: Deque<[UInt8]> = []
        /// The reader saw the link close.
        var closed = false
        /// Datagrams the pump gave the writer, in order, not yet taken by it.
        var outbox: [[UInt8]] = []
        /// Datagrams given to the writer and not yet sent (in `outbox` or in its batch).
        var queued = 0
        /// The writer waits for the outbox.
        var writerWaiting: CheckedContinuation<Void, Never>?
        /// The port stopped: the writer ends.
        var stopped = false
        /// The writer's `send` failed.
        var failed = false
    }

    /// Shared with the reader and the writer.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    private let reader: Task<Void, Never>
    private let writer: Task<Void, Never>

    init(transport: any DatagramTransport, doorbell: Doorbell, depth: Int? = nil) {
        self.transport = transport
        let depth = max(1, depth ?? Self.depth(for: transport))
        self.depth = depth
        reader = Self.startReading(transport, shared: shared, doorbell: doorbell)
        writer = Self.startWriting(to: transport, depth: depth, shared: shared, doorbell: doorbell)
    }

    /// The reader: everything that arrives, until the link closes.
    private static func startReading(_ transport: any DatagramTransport, shared: Shared, doorbell: Doorbell) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                guard let datagrams = try? await transport.receiveAvailable() else { break }
                shared.state.withLock { $0.inbound.append(contentsOf: datagrams) }
                doorbell.ring()
            }
            shared.state.withLock { $0.closed = true }
            doorbell.ring()
        }
    }

    /// The writer: sends what the pump queued, in order, a batch at a time (everything queued when
    /// it looks), until the port stops or a send fails.
    private static func startWriting(to transport: any DatagramTransport, depth: Int, shared: Shared,
                                     doorbell: Doorbell) -> Task<Void, Never> {
        Task {
            while let batch = await nextBatch(shared) {
                do {
                    try await transport.send(contentsOf: batch)
                } catch {
                    shared.state.withLock { $0.failed = true }
                    doorbell.ring()
                    return
                }
                // Wake the pump when it may be waiting for room, or for the last datagram to leave.
                let ring = shared.state.withLock { state -> Bool in
                    let wasFull = state.queued >= depth
                    state.queued -= batch.count
                    return wasFull || state.queued == 0
                }
                if ring { doorbell.ring() }
            }
        }
    }

    /// Everything in the outbox, once there is something; nil once the port stopped.
    private static func nextBatch(_ shared: Shared) async -> [[UInt8]]? {
        while true {
            let taken = shared.state.withLock { state -> [[UInt8]]?? in
                if state.stopped { return .some(nil) }
                guard !state.outbox.isEmpty else { return nil }
                defer { state.outbox.removeAll(keepingCapacity: true) }
                return state.outbox
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = shared.state.withLock { state -> Bool in
                    if state.stopped || !state.outbox.isEmpty { return true }
                    state.writerWaiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    var hasBacklog: Bool { shared.state.withLock { $0.queued > 0 } }

    func transmit<E: DatagramEndpoint>(_ endpoint: inout E, rules: ConnectionDriver, clock: any EndpointClock)
        throws(SessionError) -> Transmission where E.Failure == SessionError {
        var count = 0
        let now = clock.now
        while true {
            let (room, failed) = shared.state.withLock { [depth] in ($0.queued < depth, $0.failed) }
            if failed { return .failed }
            guard room else { return .full }
            guard let datagram = try endpoint.nextDatagram(now: now) else { return .drained(count: count) }
            guard rules.fits(datagram) else { return .failed }  // as `send` refuses it
            let waiting = shared.state.withLock { state in
                state.outbox.append(datagram)
                state.queued += 1
                return state.writerWaiting.take()
            }
            waiting?.resume()
            count += 1
        }
    }

    /// The doorbell is the port's only descriptor (the pump polls it for every connection).
    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant?) { ([], nil) }

    func serve<E: DatagramEndpoint>(_ ready: ArraySlice<pollfd>, rung: Bool, _ endpoint: inout E, clock: any EndpointClock)
        throws(SessionError) -> PortState where E.Failure == SessionError {
        while let datagram = shared.state.withLock({ $0.inbound.popFirst() }) {
            try endpoint.receive(datagram: datagram, now: clock.now)
        }
        let (closed, failed) = shared.state.withLock { ($0.closed && $0.inbound.isEmpty, $0.failed) }
        if closed { return .closed }
        return failed ? .failed : .open
    }

    func stop() {
        reader.cancel()
        writer.cancel()
        let waiting = shared.state.withLock { state in
            state.stopped = true
            return state.writerWaiting.take()
        }
        waiting?.resume()
    }
}
