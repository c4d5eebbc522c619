#if canImport(Glibc)
import Glibc
#endif
import Pipeline
import Session
import SocketIO
import Transfer

/// Runs a sans-IO endpoint over a real `DatagramTransport` for the length of one connection:
/// sends what the endpoint produces, feeds it what arrives, hands it its user's inputs as they
/// come, and runs its timers on time. The ending rules are `ConnectionDriver`'s; the loops here
/// only move datagrams.
public enum EndpointRunner {
    /// How a connection ended without an error.
    public typealias Ending = ConnectionEnding

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
        return try await driver.run(&session, transport: transport, clock: clock, inputs: NoInputs()) { events in
            events.forEach(onEvent)
        }
    }

    /// The receiver's side of one connection (the session already knows nothing of it yet).
    ///
    /// `clock` must be the same for every connection of a session: the session keeps partial
    /// transfers across connections, and their ages and expiry are read on it. Transports are
    /// driven as in `runSender`. `answers`: where the driver's user leaves answers to
    /// `approvalNeeded` (first contact, a session made with `asksAboutStrangers`); posting one
    /// wakes the driver, which hands it to the session at once.
    public static func runReceiver(_ session: inout ReceiverSession, over transport: any DatagramTransport,
                                   clock: some EndpointClock, answers: FirstContactAnswers? = nil,
                                   onEvent: (ReceiverSession.Event) -> Void) async throws(SessionError) -> Ending {
        let driver = await Driver.choose(for: transport)
        try session.accept(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                           now: clock.now, wallClock: wallClock())
        var endpoint = ReceiverEndpoint(session: session)
        defer { session = endpoint.session }
        do {
            let ending = try await driver.run(&endpoint, transport: transport, clock: clock,
                                              inputs: answers.map(AnswerInputs.init) ?? AnswerInputs(nil)) { events in
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
            guard let sockets = LoopSockets(given), let doorbell = Doorbell() else { return .lost }
            return .sockets(SocketLoop(sockets: sockets, wake: wake, doorbell: doorbell, transport: transport))
        }

        func run<E: DatagramEndpoint>(_ endpoint: inout E, transport: any DatagramTransport, clock: some EndpointClock,
                                      inputs: some EndpointInputs<E.Input>,
                                      report: ([E.Event]) -> Void) async throws(SessionError) -> Ending where E.Failure == SessionError {
            switch self {
            case .sockets(var loop):
                inputs.ring { [doorbell = loop.doorbell] in doorbell.ring() }
                defer { inputs.ring(nil) }
                return try await loop.runOnThread(&endpoint, clock: clock, inputs: inputs, report: report)
            case .transport:
                let inbox = Inbox()
                inputs.ring { inbox.nudge() }
                defer { inputs.ring(nil) }
                let reader = startReading(transport, into: inbox)
                defer { reader.cancel() }
                return try await EndpointRunner.run(&endpoint, transport: transport, inbox: inbox, clock: clock, inputs: inputs,
                                                    report: report)
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

    fileprivate static func run<E: DatagramEndpoint>(_ endpoint: inout E, transport: any DatagramTransport, inbox: Inbox,
                                                 clock: some EndpointClock, inputs: some EndpointInputs<E.Input>,
                                                 report: ([E.Event]) -> Void) async throws(SessionError) -> Ending
        where E.Failure == SessionError {
        var rules = ConnectionDriver(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize)
        while true {
            if Task.isCancelled { return .linkLost }
            for input in inputs.take() { try endpoint.take(input, now: clock.now) }
            // Report what the last datagrams caused before sending more (sending may block for a while).
            report(endpoint.takeEvents())
            let now = clock.now
            rules.follow(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize, &endpoint)
            // Transmit everything that is ready.
            while let datagram = try endpoint.nextDatagram(now: now) {
                do {
                    try await transport.send(datagram)
                } catch {
                    report(endpoint.takeEvents())
                    return .linkLost
                }
            }
            if let ending = rules.endingAfterSending(endpoint.status, now: now) { return ending }
            // Wait for the peer, the next timer or the user.
            switch await inbox.next(timeout: rules.wait(deadline: endpoint.nextDeadline, now: clock.now)) {
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
                return ConnectionDriver.endingOnClose(endpoint.status)
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

/// Where a driver takes its endpoint's inputs from, and how it is woken when one arrives.
protocol EndpointInputs<Input>: Sendable {
    associatedtype Input
    /// The inputs posted since the last call.
    func take() -> [Input]
    /// While a connection runs: what wakes its driver when an input is posted (nil: none).
    func ring(_ doorbell: (@Sendable () -> Void)?)
}

/// An endpoint nobody tells anything (the sender).
struct NoInputs: EndpointInputs {
    func take() -> [Never] { [] }
    func ring(_ doorbell: (@Sendable () -> Void)?) {}
}

/// First contact: the user's answers (`FirstContactAnswers`), for `ReceiverEndpoint`.
struct AnswerInputs: EndpointInputs {
    let answers: FirstContactAnswers?
    init(_ answers: FirstContactAnswers?) { self.answers = answers }
    func take() -> [FirstContactAnswers.Posted] { answers?.take().map { [$0] } ?? [] }
    func ring(_ doorbell: (@Sendable () -> Void)?) { answers?.ring(doorbell) }
}

/// The receiver as its runner drives it: the session, and the first-contact request its user is
/// being asked about, so that an answer applies only to the request it answers.
struct ReceiverEndpoint: DatagramEndpoint {
    typealias Failure = SessionError
    var session: ReceiverSession
    /// The request the user is being asked about, if any.
    private var asking: ApprovalRequest?

    init(session: ReceiverSession) { self.session = session }

    mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { session.nextDatagram(now: now) }
    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) { try session.receive(datagram: datagram, now: now) }
    mutating func handleTimers(now: Instant) throws(SessionError) { try session.handleTimers(now: now) }
    var nextDeadline: Instant? { session.nextDeadline }
    var status: ConnectionStatus { session.status }
    mutating func takeEvents() -> [ReceiverSession.Event] {
        let events = session.takeEvents()
        for case .approvalNeeded(let request) in events { asking = request }
        return events
    }
    mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        session.linkResized(maxDatagramSize: maxDatagramSize, peerMaxDatagramSize: peerMaxDatagramSize)
    }
    /// The user's answer, if it answers the request being asked about.
    mutating func take(_ posted: FirstContactAnswers.Posted, now: Instant) throws(SessionError) {
        guard let request = asking, posted.request == request, session.isAwaitingApproval else { return }
        asking = nil
        try session.take(posted.answer, now: now)
    }
}
