#if canImport(Glibc)
import Glibc
#endif
import Pipeline
import Session
import SocketIO
import Transfer

/// Runs a sans-IO endpoint over a real `DatagramTransport` for the length of one connection:
/// sends what the endpoint produces, feeds it what arrives, and runs its timers on time.
public enum EndpointRunner {
    /// How a connection ended without an error.
    public enum Ending: Sendable, Equatable {
        /// The session completed (sender: receiver said goodbye; receiver: goodbye exchanged).
        case finished
        /// The link went away; the caller may reconnect and resume.
        case linkLost
    }

    /// Nanoseconds since the Unix epoch (handshake replay protection).
    public static func wallClock() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The sender's side of one connection.
    ///
    /// A transport that hands over its sockets (`SocketBackedTransport`) is driven by a
    /// `SocketLoop` on a thread of its own (`onEvent` is then called on that thread while this
    /// task waits); any other through `send`/`receiveAvailable`.
    /// `receiverExtensions`: what the receiver's extensions characteristic lists.
    public static func runSender(_ session: inout SenderSession, over transport: any DatagramTransport,
                                 receiverExtensions: TransferExtensions = [], clock: some EndpointClock = MonotonicClock(),
                                 onEvent: (SenderSession.Event) -> Void) async throws(SessionError) -> Ending {
        let driver = await Driver.choose(for: transport)
        try session.connect(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                            now: clock.now, wallClock: wallClock(), receiverExtensions: receiverExtensions)
        if session.isFinished {
            // Nothing was left that this receiver takes (`connect` said so without a handshake).
            session.takeEvents().forEach(onEvent)
            return .finished
        }
        var endpoint = SenderEndpoint(session: session)
        defer { session = endpoint.session }
        return try await driver.run(&endpoint, transport: transport, clock: clock) { events in
            events.forEach(onEvent)
        }
    }

    /// The receiver's side of one connection (the session already knows nothing of it yet).
    ///
    /// `clock` must be the same for every connection of a session: the session keeps partial
    /// transfers across connections, and their ages and expiry are read on it. Transports are
    /// driven as in `runSender`. `answers`: where the driver leaves its user's answers to
    /// `approvalNeeded` (first contact, a session made with `asksAboutStrangers`).
    public static func runReceiver(_ session: inout ReceiverSession, over transport: any DatagramTransport,
                                   clock: some EndpointClock, answers: FirstContactAnswers? = nil,
                                   onEvent: (ReceiverSession.Event) -> Void) async throws(SessionError) -> Ending {
        let driver = await Driver.choose(for: transport)
        try session.accept(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                           now: clock.now, wallClock: wallClock())
        var endpoint = ReceiverEndpoint(session: session, answers: answers, now: clock.now)
        defer { session = endpoint.session }
        do {
            let ending = try await driver.run(&endpoint, transport: transport, clock: clock) { events in
                events.forEach(onEvent)
            }
            endpoint.session.linkLost(now: clock.now)
            return ending
        } catch {
            endpoint.session.linkLost(now: clock.now)
            endpoint.session.takeEvents().forEach(onEvent)
            throw error
        }
    }

    /// How one connection is driven.
    private enum Driver {
        /// The transport's sockets, by a `SocketLoop` on its own thread.
        case sockets(SocketLoop)
        /// `send` and `receiveAvailable`, by the async loop.
        case transport
        /// The transport handed its sockets over but the loop could not take them (descriptor
        /// limit): nothing reads the link any more, so the connection is over.
        case lost

        static func choose(for transport: any DatagramTransport) async -> Driver {
            guard let socketBacked = transport as? any SocketBackedTransport, let wake = WakeSignal() else { return .transport }
            guard let given = await socketBacked.takeSockets(wakingOnClose: wake) else { return .transport }
            guard let sockets = LoopSockets(given) else { return .lost }
            return .sockets(SocketLoop(sockets: sockets, wake: wake, transport: transport))
        }

        func run<E: Endpoint>(_ endpoint: inout E, transport: any DatagramTransport, clock: some EndpointClock,
                              report: ([E.Event]) -> Void) async throws(SessionError) -> Ending {
            switch self {
            case .sockets(var loop):
                return try await loop.runOnThread(&endpoint, clock: clock, report: report)
            case .transport:
                let inbox = Inbox()
                let reader = startReading(transport, into: inbox)
                defer { reader.cancel() }
                return try await EndpointRunner.run(&endpoint, transport: transport, inbox: inbox, clock: clock, report: report)
            case .lost:
                report(endpoint.takeEvents())
                return .linkLost
            }
        }
    }

    fileprivate static func startReading(_ transport: any DatagramTransport, into inbox: Inbox) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                do {
                    inbox.put(try await transport.receiveAvailable())
                } catch {
                    break
                }
            }
            inbox.close()
        }
    }

    fileprivate static func run<E: Endpoint>(_ endpoint: inout E, transport: any DatagramTransport, inbox: Inbox,
                                         clock: some EndpointClock, report: ([E.Event]) -> Void) async throws(SessionError) -> Ending {
        var lingerStart: Instant?
        var datagramSize = transport.maxDatagramSize
        while true {
            if Task.isCancelled { return .linkLost }
            // Report what the last datagrams caused before sending more (sending may block for a while).
            report(endpoint.takeEvents())
            let now = clock.now
            if transport.maxDatagramSize != datagramSize {
                datagramSize = transport.maxDatagramSize
                endpoint.setMaxDatagramSize(datagramSize, peer: transport.peerMaxDatagramSize)
            }
            // Transmit everything that is ready.
            while let datagram = try endpoint.nextDatagram(now: now) {
                do {
                    try await transport.send(datagram)
                } catch {
                    report(endpoint.takeEvents())
                    return .linkLost
                }
            }
            if endpoint.isComplete {
                // Give the last acknowledgements a moment to leave before the caller disconnects.
                if endpoint.isSettled || lingerStart.map({ now.duration(since: $0) > .milliseconds(300) }) == true {
                    return .finished
                }
                lingerStart = lingerStart ?? now
            }
            // Wait for the peer or the next timer.
            let deadline = endpoint.nextDeadline
            var wait = deadline.map { $0.duration(since: clock.now) } ?? .seconds(1)
            if lingerStart != nil { wait = min(wait, .milliseconds(20)) }
            switch await inbox.next(timeout: max(wait, .milliseconds(1))) {
            case .datagram(let datagram):
                try endpoint.receive(datagram: datagram, now: clock.now)
                // Take whatever else is already here before sending again.
                while case .datagram(let more)? = inbox.poll() {
                    try endpoint.receive(datagram: more, now: clock.now)
                }
            case .timeout:
                break
            case .closed:
                report(endpoint.takeEvents())
                return endpoint.isComplete || endpoint.isDone ? .finished : .linkLost
            }
            try endpoint.handleTimers(now: clock.now)
        }
    }
}

/// Where a driver reads the time it hands the sans-IO core.
public protocol EndpointClock: Sendable {
    /// Monotonic time since some fixed start.
    var now: Instant { get }
}

/// Monotonic time since this clock was made, as the core's `Instant`.
public struct MonotonicClock: EndpointClock {
    private let start = ContinuousClock.now

    public init() {}

    public var now: Instant {
        Instant(nanoseconds: UInt64(max(0, (ContinuousClock.now - start).nanoseconds)))
    }
}

/// The common face of both endpoints for the loop above: the sans-IO `DatagramEndpoint` that the
/// virtual network drives too, plus what a real connection needs to know to end.
protocol Endpoint: DatagramEndpoint where Failure == SessionError {
    associatedtype Event
    var isComplete: Bool { get }
    /// Complete, and nothing left to acknowledge.
    var isSettled: Bool { get }
    /// The work is done even if the link closes now.
    var isDone: Bool { get }
    mutating func takeEvents() -> [Event]
    mutating func setMaxDatagramSize(_ size: Int, peer: Int)
}

struct SenderEndpoint: Endpoint {
    var session: SenderSession
    mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { try session.nextDatagram(now: now) }
    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) { try session.receive(datagram: datagram, now: now) }
    mutating func handleTimers(now: Instant) throws(SessionError) { try session.handleTimers(now: now) }
    var nextDeadline: Instant? { session.nextDeadline }
    var isComplete: Bool { session.isFinished }
    var isSettled: Bool { session.isFinished && session.isLinkIdle }
    var isDone: Bool { session.isFinished }
    mutating func takeEvents() -> [SenderSession.Event] { session.takeEvents() }
    mutating func setMaxDatagramSize(_ size: Int, peer: Int) { session.setMaxDatagramSize(size, peer: peer) }
}

struct ReceiverEndpoint: Endpoint {
    var session: ReceiverSession
    let answers: FirstContactAnswers?
    /// The request the user is being asked about, if any.
    private var asking: ApprovalRequest?
    /// The time of the last step, from which the loop looks again for the user's answer.
    private var lastStep: Instant

    init(session: ReceiverSession, answers: FirstContactAnswers? = nil, now: Instant = .zero) {
        self.session = session
        self.answers = answers
        self.lastStep = now
    }

    mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { session.nextDatagram(now: now) }
    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        lastStep = now
        try session.receive(datagram: datagram, now: now)
    }
    mutating func handleTimers(now: Instant) throws(SessionError) {
        lastStep = now
        if let request = asking, session.isAwaitingApproval, let answer = answers?.take(for: request) {
            asking = nil
            switch answer {
            case .approve(let name): try session.approve(name: name, now: now)
            case .decline: try session.decline(now: now)
            }
        }
        try session.handleTimers(now: now)
    }
    var nextDeadline: Instant? {
        guard asking != nil, answers != nil, session.isAwaitingApproval else { return session.nextDeadline }
        let look = lastStep.advanced(by: FirstContactAnswers.pollInterval)
        return session.nextDeadline.map { min($0, look) } ?? look
    }
    var isComplete: Bool { session.connectionComplete }
    var isSettled: Bool { session.connectionComplete }
    var isDone: Bool { session.senderSaidGoodbye }
    mutating func takeEvents() -> [ReceiverSession.Event] {
        let events = session.takeEvents()
        for case .approvalNeeded(let request) in events { asking = request }
        return events
    }
    mutating func setMaxDatagramSize(_ size: Int, peer: Int) { session.setMaxDatagramSize(size, peer: peer) }
}
