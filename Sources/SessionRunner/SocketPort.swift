import DequeModule
import Glibc
import Pipeline
import Session
import SocketIO

/// Sockets a transport handed over, as the real-time pump moves datagrams through them: one
/// wake-up reads every datagram waiting (`recvmmsg`, up to 32 per call) and the endpoint's answers
/// go out in batches (`sendmmsg`), with no thread hop per datagram. A datagram is taken from the
/// endpoint only when the socket can take it now, so the time the endpoint stamps on it (its RTT
/// sample) is the time it leaves, not the time before a wait for room.
///
/// It polls the inbound socket (except during a batch pause), the outbound one only while it
/// refused something, and checks every `holdCheckInterval` that the transport still holds the
/// sockets (for transports that do not raise the wake signal on `close()`).
final class SocketPort: PumpPort {
    let sockets: LoopSockets
    let transport: any DatagramTransport
    let configuration: SocketPortConfiguration
    private let reader: DatagramBatchReader
    private let writer: DatagramBatchWriter
    /// Taken from the endpoint, not yet taken by the socket (it was full): at most one batch.
    private var unsent: Deque<[UInt8]> = []
    private var socketFull = false
    private var lastHoldCheck: Instant?
    /// The last read ended with a short batch: more may be on the way (see `batchWait`).
    private var mayPause = false
    /// Until when the inbound socket is left alone, waiting for a batch to fill.
    private var pauseUntil: Instant?

    init(sockets: LoopSockets, transport: any DatagramTransport, configuration: SocketPortConfiguration = SocketPortConfiguration()) {
        self.sockets = sockets
        self.transport = transport
        self.configuration = configuration
        reader = DatagramBatchReader(capacity: configuration.batch,
                                     slotSize: max(transport.peerMaxDatagramSize, transport.maxDatagramSize, 1024))
        writer = DatagramBatchWriter(capacity: configuration.batch, slotSize: max(transport.maxDatagramSize, 512))
    }

    var hasBacklog: Bool { !unsent.isEmpty }

    /// Sends what was left over, then takes datagrams from the endpoint one batch at a time, each
    /// stamped when its batch is offered, until the endpoint has nothing or the socket is full.
    /// A short batch just read and nothing going out in answer: pause reading a moment so that a
    /// stream arriving datagram by datagram is read a batch per wake-up. Never while there is
    /// something to send: a sender must not hold its data back for the peer's acks.
    func transmit<E: DatagramEndpoint>(_ endpoint: inout E, rules: ConnectionDriver, clock: any EndpointClock)
        throws(SessionError) -> Transmission where E.Failure == SessionError {
        var result = Transmission.drained(count: 0)
        if !socketFull {
            result = try send(&endpoint, rules: rules, clock: clock)
            if case .full = result { socketFull = true }
        }
        if mayPause, case .drained(0) = result {
            pauseUntil = Self.pauseEnd(now: clock.now, pause: configuration.batchWait, deadline: endpoint.nextDeadline)
        }
        mayPause = false
        return result
    }

    private func send<E: DatagramEndpoint>(_ endpoint: inout E, rules: ConnectionDriver, clock: any EndpointClock)
        throws(SessionError) -> Transmission where E.Failure == SessionError {
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

    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant?) {
        let read = Int16(POLLIN)
        let write = Int16(POLLOUT)
        if let until = pauseUntil, until <= now { pauseUntil = nil }
        var entries = [pollfd(fd: pauseUntil == nil ? sockets.inbound : -1, events: read, revents: 0)]
        if socketFull {
            if sockets.outbound == sockets.inbound && pauseUntil == nil {
                entries[0].events |= write
            } else {
                entries.append(pollfd(fd: sockets.outbound, events: write, revents: 0))
            }
        }
        let holdCheck = (lastHoldCheck ?? now).advanced(by: configuration.holdCheckInterval)
        if lastHoldCheck == nil { lastHoldCheck = now }
        return (entries, pauseUntil.map { min($0, holdCheck) } ?? holdCheck)
    }

    func serve<E: DatagramEndpoint>(_ ready: ArraySlice<pollfd>, rung: Bool, _ endpoint: inout E, clock: any EndpointClock)
        throws(SessionError) -> PortState where E.Failure == SessionError {
        let read = Int16(POLLIN)
        let write = Int16(POLLOUT)
        let trouble = Int16(POLLHUP | POLLERR | POLLNVAL)
        let inbound = ready[ready.startIndex]
        if socketFull {
            let outbound = ready.count > 1 ? ready[ready.startIndex + 1] : inbound
            if outbound.fd >= 0, outbound.revents & (write | trouble) != 0 { socketFull = false }
        }
        if inbound.fd >= 0, inbound.revents & (read | trouble) != 0 {
            switch try receiveWaiting(&endpoint, clock: clock) {
            case .ended: return .closed
            case .open(let shortBatch): mayPause = shortBatch
            }
        }
        let now = clock.now
        if now.duration(since: lastHoldCheck ?? now) >= configuration.holdCheckInterval {
            lastHoldCheck = now
            if !sockets.transportHoldsThem { return .closed }
        }
        return .open
    }

    func stop() {}

    private enum Reception {
        /// `shortBatch`: the last read returned fewer datagrams than a batch holds.
        case open(shortBatch: Bool)
        case ended
    }

    /// Feeds the endpoint every datagram waiting (a bounded number of batches, so that timers and
    /// sending get their turn).
    private func receiveWaiting<E: DatagramEndpoint>(_ endpoint: inout E, clock: any EndpointClock) throws(SessionError) -> Reception
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

    /// The end of a pause for more datagrams begun at `now`: never past the endpoint's next
    /// deadline (an ack or a retransmission is not held back for batching). Nil: do not pause.
    static func pauseEnd(now: Instant, pause: Duration, deadline: Instant?) -> Instant? {
        guard pause > .zero else { return nil }
        var end = now.advanced(by: pause)
        if let deadline { end = min(end, deadline) }
        return end > now ? end : nil
    }
}

/// Tunables of the socket port.
struct SocketPortConfiguration: Sendable {
    /// Datagrams per `recvmmsg`/`sendmmsg`.
    var batch = 32
    /// Batches read per wake-up before sending and timers get a turn.
    var maxBatchesPerWake = 16
    /// After a batch shorter than `batch` that leaves nothing to send, pause this long (never past
    /// the endpoint's next deadline) before reading the socket again. In the TCG lab (one
    /// saturated vCPU), 5 ms took blesend from 0.61 to 0.74 of raw AcquireWrite goodput (10 ms:
    /// 0.70), median of 3 runs per boot. It once applied after sending too, and then held a
    /// sender's data back after each ack: natively (`blesend-bench sockets`) a transfer took 7.6
    /// times as long as with no pause at all.
    var batchWait: Duration = .milliseconds(5)
    /// How often the port checks that the transport has not closed the sockets behind its back
    /// (for transports that do not raise the wake signal on `close()`).
    var holdCheckInterval: Duration = .milliseconds(100)
}
