import DequeModule
import Glibc
import Pipeline
import Session
import SocketIO

/// Drives one endpoint over sockets a transport handed over, synchronously, on the thread that
/// calls `run` (a thread of its own: it blocks in `poll`). One wake-up reads every datagram
/// waiting (`recvmmsg`, up to 32 per call) and the endpoint's answers go out in batches
/// (`sendmmsg`), with no thread hop per datagram. A datagram is taken from the endpoint only when
/// the socket can take it now, so the time the endpoint stamps on it (its RTT sample) is the time
/// it leaves, not the time before a wait for room.
///
/// Ends by `ConnectionDriver`'s rules, as `EndpointRunner`'s async loop does. A raised
/// `WakeSignal` ends it at once: `.closed` like a closed transport, `.cancelled` like a cancelled
/// task. A rung `Doorbell` wakes it to hand its endpoint an input.
struct SocketLoop {
    let sockets: LoopSockets
    let wake: WakeSignal
    let doorbell: Doorbell
    /// Read for its datagram sizes only (they change when BlueZ reports a new ATT MTU).
    let transport: any DatagramTransport
    let configuration: SocketLoopConfiguration
    private let reader: DatagramBatchReader
    private let writer: DatagramBatchWriter
    /// Taken from the endpoint, not yet taken by the socket (it was full): at most one batch.
    private var unsent: Deque<[UInt8]> = []

    init(sockets: LoopSockets, wake: WakeSignal, doorbell: Doorbell, transport: any DatagramTransport,
         configuration: SocketLoopConfiguration = SocketLoopConfiguration()) {
        self.sockets = sockets
        self.wake = wake
        self.doorbell = doorbell
        self.transport = transport
        self.configuration = configuration
        reader = DatagramBatchReader(capacity: configuration.batch,
                                     slotSize: max(transport.peerMaxDatagramSize, transport.maxDatagramSize, 1024))
        writer = DatagramBatchWriter(capacity: configuration.batch, slotSize: max(transport.maxDatagramSize, 512))
    }

    mutating func run<E: DatagramEndpoint>(_ endpoint: inout E, clock: some EndpointClock, inputs: some EndpointInputs<E.Input>,
                                           report: ([E.Event]) -> Void) throws(SessionError) -> EndpointRunner.Ending
        where E.Failure == SessionError {
        var rules = ConnectionDriver(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize)
        var socketFull = false
        var lastHoldCheck = clock.now
        // The last read ended with a short batch: more may be on the way (see `batchWait`).
        var mayPause = false
        while true {
            if wake.raised == .cancelled { return .linkLost }
            for input in inputs.take() { try endpoint.take(input, now: clock.now) }
            // Report what the last datagrams caused before sending more.
            report(endpoint.takeEvents())
            let now = clock.now
            rules.follow(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize, &endpoint)
            // Transmit what the socket takes now.
            var sent = false
            if !socketFull {
                switch try transmit(&endpoint, rules: rules, clock: clock) {
                case .drained(let count): sent = count > 0
                case .full: socketFull = true; sent = true
                case .failed:
                    report(endpoint.takeEvents())
                    return .linkLost
                }
            }
            // A short batch just arrived and nothing goes out in answer: wait a moment so that a
            // stream arriving datagram by datagram is read a batch per wake-up. Never while there
            // is something to send: a sender must not hold its data back for the peer's acks.
            if mayPause, !sent, let until = batchWaitEnd(endpoint, clock: clock) {
                SocketPoll.pause(wake: wake.fd, until: until, clock: clock)
            }
            mayPause = false
            if let ending = rules.endingAfterSending(endpoint.status, backlog: !unsent.isEmpty, now: now) { return ending }
            // Wait for the peer, room in the socket, the next timer, an input or the wake signal.
            let wait = min(rules.wait(deadline: endpoint.nextDeadline, now: clock.now), configuration.holdCheckInterval)
            let ready = SocketPoll.wait(inbound: sockets.inbound, outbound: socketFull ? sockets.outbound : nil,
                                        wake: wake.fd, doorbell: doorbell.fd, timeout: wait)
            if ready.rung { doorbell.drain() }
            if ready.outboundWritable { socketFull = false }
            if ready.inboundReadable {
                switch try receiveWaiting(&endpoint, clock: clock) {
                case .ended: return closed(&endpoint, report)
                case .open(let shortBatch): mayPause = shortBatch
                }
            }
            if ready.woken, let reason = wake.raised {
                if reason == .cancelled { return .linkLost }
                return closed(&endpoint, report)
            }
            if clock.now.duration(since: lastHoldCheck) >= configuration.holdCheckInterval {
                lastHoldCheck = clock.now
                if !sockets.transportHoldsThem { return closed(&endpoint, report) }
            }
            try endpoint.handleTimers(now: clock.now)
        }
    }

    /// The link closed under us: as the async loop's `.closed`.
    private func closed<E: DatagramEndpoint>(_ endpoint: inout E, _ report: ([E.Event]) -> Void) -> EndpointRunner.Ending {
        report(endpoint.takeEvents())
        return ConnectionDriver.endingOnClose(endpoint.status)
    }

    private enum Transmission {
        /// The endpoint has nothing more to send now; `count` datagrams went out.
        case drained(count: Int)
        case full, failed
    }

    /// Sends what was left over, then takes datagrams from the endpoint one batch at a time, each
    /// stamped when its batch is offered, until the endpoint has nothing or the socket is full.
    private mutating func transmit<E: DatagramEndpoint>(_ endpoint: inout E, rules: ConnectionDriver,
                                                        clock: some EndpointClock) throws(SessionError) -> Transmission
        where E.Failure == SessionError {
        var total = 0
        while true {
            if unsent.isEmpty {
                let now = clock.now
                while unsent.count < writer.capacity, let datagram = try endpoint.nextDatagram(now: now) {
                    guard rules.fits(datagram) else { return .failed }  // as `send` refuses it
                    unsent.append(datagram)
                }
                if unsent.isEmpty { return .drained(count: total) }
            }
            switch writer.write(unsent, to: sockets.outbound) {
            case .sent(let count):
                total += count
                unsent.removeFirst(count)
                if !unsent.isEmpty { return .full }
            case .wouldBlock:
                return .full
            case .failed:
                return .failed
            }
        }
    }

    private enum Reception {
        /// `shortBatch`: the last read returned fewer datagrams than a batch holds.
        case open(shortBatch: Bool)
        case ended
    }

    /// Feeds the endpoint every datagram waiting (a bounded number of batches, so that timers and
    /// sending get their turn).
    private mutating func receiveWaiting<E: DatagramEndpoint>(_ endpoint: inout E, clock: some EndpointClock) throws(SessionError) -> Reception
        where E.Failure == SessionError {
        for _ in 0..<configuration.maxBatchesPerWake {
            switch reader.read(sockets.inbound) {
            case .datagrams(let datagrams):
                for datagram in datagrams { try endpoint.receive(datagram: datagram, now: clock.now) }
                if datagrams.count < reader.capacity { return .open(shortBatch: true) }
            case .wouldBlock:
                return .open(shortBatch: false)
            case .ended(let before):
                for datagram in before { try endpoint.receive(datagram: datagram, now: clock.now) }
                return .ended
            }
        }
        return .open(shortBatch: false)
    }

    /// How long to wait for more after a short batch.
    private func batchWaitEnd<E: DatagramEndpoint>(_ endpoint: E, clock: some EndpointClock) -> Instant? {
        Self.pauseEnd(now: clock.now, pause: configuration.batchWait, deadline: endpoint.nextDeadline)
    }

    /// The end of a pause for more datagrams begun at `now`: never past the endpoint's next
    /// deadline (an ack or a retransmission is not held back for batching). Nil: do not pause.
    static func pauseEnd(now: Instant, pause: Duration, deadline: Instant?) -> Instant? {
        guard pause > .zero else { return nil }
        var end = now.advanced(by: pause)
        if let deadline { end = min(end, deadline) }
        return end > now ? end : nil
    }
}

/// Tunables of the socket loop.
struct SocketLoopConfiguration: Sendable {
    /// Datagrams per `recvmmsg`/`sendmmsg`.
    var batch = 32
    /// Batches read per wake-up before sending and timers get a turn.
    var maxBatchesPerWake = 16
    /// After a batch shorter than `batch` that leaves nothing to send, pause this long (never past
    /// the endpoint's next deadline) before waiting for the socket again. In the TCG lab (one
    /// saturated vCPU), 5 ms took blesend from 0.61 to 0.74 of raw AcquireWrite goodput (10 ms:
    /// 0.70), median of 3 runs per boot. It once applied after sending too, and then held a
    /// sender's data back after each ack: natively (`blesend-bench sockets`) a transfer took 7.6
    /// times as long as with no pause at all.
    var batchWait: Duration = .milliseconds(5)
    /// How often the loop checks that the transport has not closed the sockets behind its back
    /// (for transports that do not raise the wake signal on `close()`).
    var holdCheckInterval: Duration = .milliseconds(100)
}

extension SocketLoop {
    /// `run` on a thread of its own while the calling task waits; cancelling the task wakes the
    /// loop, which then ends as the async loop does on cancellation (`.linkLost`).
    mutating func runOnThread<E: DatagramEndpoint>(_ endpoint: inout E, clock: some EndpointClock, inputs: some EndpointInputs<E.Input>,
                                                   report: ([E.Event]) -> Void) async throws(SessionError) -> EndpointRunner.Ending
        where E.Failure == SessionError {
        let wake = self.wake
        let result = await withTaskCancellationHandler {
            await LoopThread.run { Result { () throws(SessionError) in try self.run(&endpoint, clock: clock, inputs: inputs, report: report) } }
        } onCancel: {
            wake.raise(.cancelled)
        }
        return try result.get()
    }
}
