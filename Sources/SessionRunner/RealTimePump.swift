import Glibc
import Pipeline
import Session
import SocketIO

/// The real-time pump: one thread, one `poll()` set, any number of connections, each its endpoint,
/// its port (the transport as the pump sees it) and its deadlines. It carries no rules of its own:
/// when a connection ends is `ConnectionDriver`'s to say. A turn of the pump gives every
/// connection its turn (inputs, events, sizes, transmit, ending), polls once over every
/// connection's descriptors with the earliest of their wake-up times, and hands each connection
/// what its descriptors said (datagrams, room, an input, the wake signal), then its timers.
///
/// `EndpointRunner` runs one connection per pump on a thread of its own (`LoopThread`); the
/// receiver server is the host of one pump (`PumpHost`): it adds each admitted connection's
/// `PumpSlot`, and its admission policy's deadlines are one more wake-up time in the same poll.
struct RealTimePump {
    private(set) var slots: [any PumpSlot]

    init(_ slots: [any PumpSlot]) { self.slots = slots }

    /// Turns until every connection has ended and `host` (if any) has closed; each slot reports
    /// its own ending. A host adds connections at every turn and hears of each one's end.
    mutating func run(clock: some EndpointClock, host: (any PumpHost)? = nil) {
        while true {
            if let host { slots += host.takeNewSlots(now: clock.now) }
            endTurns(clock: clock, host: host) { _, slot in slot.turn(now: clock.now) }
            guard !slots.isEmpty || host?.isOpen == true else { return }
            var entries: [pollfd] = []
            var ranges: [Range<Int>] = []
            let now = clock.now
            var wakeBy = Instant.distantFuture
            for slot in slots {
                let (own, by) = slot.pollEntries(now: now)
                ranges.append(entries.count..<entries.count + own.count)
                entries += own
                wakeBy = min(wakeBy, by)
            }
            let hostEntries = host?.pollEntries(now: now)
            let hostStart = entries.count
            if let hostEntries {
                entries += hostEntries.entries
                wakeBy = min(wakeBy, hostEntries.wakeBy)
            }
            let timeout = SocketPoll.milliseconds(wakeBy.duration(since: clock.now))
            _ = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeout) }
            endTurns(clock: clock, host: host) { index, slot in slot.serve(entries[ranges[index]], now: clock.now) }
            host?.serve(entries[hostStart...], now: clock.now)
        }
    }

    /// Gives every slot `step` (with its index), in order, then drops those that ended and tells
    /// the host.
    private mutating func endTurns(clock: some EndpointClock, host: (any PumpHost)?, _ step: (Int, any PumpSlot) -> Bool) {
        var ended: [Int] = []
        for (index, slot) in slots.enumerated() where step(index, slot) { ended.append(index) }
        for index in ended.reversed() {
            let slot = slots.remove(at: index)
            host?.ended(slot, now: clock.now)
        }
    }
}

/// The owner of a pump whose connections come and go (a server): it hands the pump new
/// connections at every turn, polls descriptors of its own (a mailbox) with a deadline of its own
/// (an admission policy's timers), and hears of every connection's end. All on the pump's thread.
protocol PumpHost: AnyObject {
    /// Connections to add now (called at the start of every turn).
    func takeNewSlots(now: Instant) -> [any PumpSlot]
    /// While true the pump runs even with no connection.
    var isOpen: Bool { get }
    /// The host's own descriptors and the time it wants a turn by.
    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant)
    /// What the poll said about the host's descriptors; then its timers.
    func serve(_ ready: ArraySlice<pollfd>, now: Instant)
    /// `slot` ended (it has its outcome) and left the pump.
    func ended(_ slot: any PumpSlot, now: Instant)
}

/// One connection on the pump, its endpoint's type erased. `turn` and `serve` return true once
/// the connection has ended (the slot has then reported how).
protocol PumpSlot: AnyObject {
    /// Inputs, events, sizes, transmit, ending.
    func turn(now: Instant) -> Bool
    /// The descriptors to poll and when the connection wants a turn at the latest.
    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant)
    /// What the poll said about this connection's descriptors; then its timers.
    func serve(_ ready: ArraySlice<pollfd>, now: Instant) -> Bool
}

/// What moving datagrams out did.
enum Transmission {
    /// The endpoint has nothing more to send now; `count` datagrams went out.
    case drained(count: Int)
    /// The transport takes no more for now.
    case full
    /// The transport refused a datagram: the link is lost.
    case failed
}

/// What a port saw after a poll.
enum PortState {
    case open
    /// The link closed under the pump (`ConnectionDriver.endingOnClose`).
    case closed
    /// The transport failed a send: the link is lost.
    case failed
}

/// A connection's transport as the pump sees it: descriptors to poll, and datagrams moved
/// between them and the endpoint. `SocketPort` for sockets a transport hands over, `AsyncPort`
/// for every other transport.
protocol PumpPort: AnyObject {
    /// Read for its datagram sizes (they change when BlueZ reports a new ATT MTU).
    var transport: any DatagramTransport { get }
    /// Datagrams taken from the endpoint that the transport has not taken yet.
    var hasBacklog: Bool { get }
    func transmit<E: DatagramEndpoint>(_ endpoint: inout E, rules: ConnectionDriver, clock: any EndpointClock)
        throws(SessionError) -> Transmission where E.Failure == SessionError
    /// The port's own descriptors and the time it wants a turn by (nil: none).
    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant?)
    /// Feeds the endpoint what the port's descriptors (or its doorbell) say arrived.
    func serve<E: DatagramEndpoint>(_ ready: ArraySlice<pollfd>, rung: Bool, _ endpoint: inout E, clock: any EndpointClock)
        throws(SessionError) -> PortState where E.Failure == SessionError
    /// The pump is done with the port.
    func stop()
}

/// A connection on the pump: its endpoint, its port, its rules, its user's inputs and the wake
/// signal (the transport's close, the caller's cancellation).
final class PumpedConnection<E: DatagramEndpoint, Inputs: EndpointInputs<E.Input>>: PumpSlot where E.Failure == SessionError {
    private(set) var endpoint: E
    let port: any PumpPort
    let wake: WakeSignal
    /// Rung by the user's inputs and by the port (an async transport's datagrams and room).
    let doorbell: Doorbell
    let inputs: Inputs
    let clock: any EndpointClock
    private var rules: ConnectionDriver
    private let report: ([E.Event]) -> Void
    /// How the connection ended, once it has.
    private(set) var outcome: Result<ConnectionEnding, SessionError>?

    init(_ endpoint: E, port: any PumpPort, wake: WakeSignal, doorbell: Doorbell, inputs: Inputs, clock: any EndpointClock,
         report: @escaping ([E.Event]) -> Void) {
        self.endpoint = endpoint
        self.port = port
        self.wake = wake
        self.doorbell = doorbell
        self.inputs = inputs
        self.clock = clock
        self.report = report
        rules = ConnectionDriver(maxDatagramSize: port.transport.maxDatagramSize,
                                 peerMaxDatagramSize: port.transport.peerMaxDatagramSize)
    }

    func turn(now _: Instant) -> Bool {
        do throws(SessionError) {
            if wake.raised == .cancelled { return end(.linkLost) }
            for input in inputs.take() { try endpoint.take(input, now: clock.now) }
            // Report what the last datagrams caused before sending more.
            report(endpoint.takeEvents())
            let now = clock.now
            rules.follow(maxDatagramSize: port.transport.maxDatagramSize, peerMaxDatagramSize: port.transport.peerMaxDatagramSize,
                         &endpoint)
            if case .failed = try port.transmit(&endpoint, rules: rules, clock: clock) {
                report(endpoint.takeEvents())
                return end(.linkLost)
            }
            if let ending = rules.endingAfterSending(endpoint.status, backlog: port.hasBacklog, now: now) { return end(ending) }
            return false
        } catch {
            return fail(error)
        }
    }

    func pollEntries(now: Instant) -> (entries: [pollfd], wakeBy: Instant) {
        let read = Int16(POLLIN)
        let (own, portBy) = port.pollEntries(now: now)
        var wakeBy = now.advanced(by: rules.wait(deadline: endpoint.nextDeadline, now: now))
        if let portBy { wakeBy = min(wakeBy, portBy) }
        return ([pollfd(fd: wake.fd, events: read, revents: 0), pollfd(fd: doorbell.fd, events: read, revents: 0)] + own, wakeBy)
    }

    func serve(_ ready: ArraySlice<pollfd>, now _: Instant) -> Bool {
        let woken = ready[ready.startIndex].revents != 0
        let rung = ready[ready.startIndex + 1].revents != 0
        if rung { doorbell.drain() }
        do throws(SessionError) {
            switch try port.serve(ready.dropFirst(2), rung: rung, &endpoint, clock: clock) {
            case .open: break
            case .closed: return closed()
            case .failed:
                report(endpoint.takeEvents())
                return end(.linkLost)
            }
            if woken, let reason = wake.raised {
                if reason == .cancelled { return end(.linkLost) }
                return closed()
            }
            try endpoint.handleTimers(now: clock.now)
            return false
        } catch {
            return fail(error)
        }
    }

    /// The link closed under the pump.
    private func closed() -> Bool {
        report(endpoint.takeEvents())
        return end(ConnectionDriver.endingOnClose(endpoint.status))
    }

    private func end(_ ending: ConnectionEnding) -> Bool {
        outcome = .success(ending)
        port.stop()
        return true
    }

    private func fail(_ error: SessionError) -> Bool {
        outcome = .failure(error)
        port.stop()
        return true
    }
}
