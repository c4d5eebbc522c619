#if canImport(Glibc)
import Glibc
#endif
import Pipeline
import Session
import SocketIO
import Transfer

/// Runs a sans-IO endpoint over a real `DatagramTransport` for the length of one connection:
/// sends what the endpoint produces, feeds it what arrives, hands it its user's inputs as they
/// come, and runs its timers on time, on the real-time pump (`RealTimePump`). The ending rules are
/// `ConnectionDriver`'s; the pump only moves datagrams.
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
    /// The connection runs on a real-time pump on a thread of its own (`onEvent` is called on that
    /// thread while this task waits): a transport that hands over its sockets (`takeSockets`)
    /// through a `SocketPort`, any other through `send` and
    /// `receiveAvailable` (`AsyncPort`).
    /// `receiverExtensions`: what the receiver's extensions characteristic lists.
    public static func runSender(_ session: inout SenderSession, over transport: any DatagramTransport,
                                 receiverExtensions: TransferExtensions = [], clock: some EndpointClock = MonotonicClock(),
                                 onEvent: (SenderSession.Event) -> Void) async throws(SessionError) -> Ending {
        try session.connect(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                            now: clock.now, wallClock: wallClock(), receiverExtensions: receiverExtensions)
        if session.isFinished {
            // Nothing was left that this receiver takes (`connect` said so without a handshake).
            session.takeEvents().forEach(onEvent)
            return .finished
        }
        return try await drive(&session, over: transport, clock: clock, inputs: NoInputs()) { events in
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
        try session.accept(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                           now: clock.now, wallClock: wallClock())
        var endpoint = ReceiverEndpoint(session: session)
        defer { session = endpoint.session }
        do {
            let ending = try await drive(&endpoint, over: transport, clock: clock, inputs: AnswerInputs(answers)) { events in
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

    /// Runs one connection on a real-time pump of its own, on a thread of its own, while the
    /// calling task waits; cancelling the task wakes the pump, which then ends the connection as
    /// a lost link.
    static func drive<E: DatagramEndpoint>(_ endpoint: inout E, over transport: any DatagramTransport,
                                                   clock: some EndpointClock, inputs: some EndpointInputs<E.Input>,
                                                   report: ([E.Event]) -> Void) async throws(SessionError) -> Ending
        where E.Failure == SessionError {
        // No descriptor for the wake signal or the doorbell (descriptor limit): nothing can wait
        // for the link, so the connection is over.
        guard let wake = WakeSignal(), let doorbell = Doorbell() else {
            report(endpoint.takeEvents())
            return .linkLost
        }
        guard let port = await makePort(for: transport, wake: wake, doorbell: doorbell) else {
            report(endpoint.takeEvents())
            return .linkLost
        }
        inputs.ring { doorbell.ring() }
        defer { inputs.ring(nil) }
        let result = await withTaskCancellationHandler {
            await LoopThread.run { () -> Result<Ending, SessionError> in
                withoutActuallyEscaping(report) { report in
                    let connection = PumpedConnection(endpoint, port: port, wake: wake, doorbell: doorbell, inputs: inputs,
                                                      clock: clock, report: report)
                    var pump = RealTimePump([connection])
                    pump.run(clock: clock)
                    endpoint = connection.endpoint
                    return connection.outcome ?? .success(.linkLost)
                }
            }
        } onCancel: {
            wake.raise(.cancelled)
        }
        return try result.get()
    }
}

/// The port the pump moves `transport`'s datagrams through: a `SocketPort` over the sockets the
/// transport hands over (`wake` is raised when it closes), else an `AsyncPort` that rings
/// `doorbell`. Nil when the transport handed its sockets over but they cannot be duplicated:
/// nothing reads the link any more.
func makePort(for transport: any DatagramTransport, wake: WakeSignal, doorbell: Doorbell) async -> (any PumpPort)? {
    guard let given = await transport.takeSockets(wakingOnClose: wake) else {
        return AsyncPort(transport: transport, doorbell: doorbell)
    }
    return LoopSockets(given).map { SocketPort(sockets: $0, transport: transport) }
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

/// What the receiver's driver hands its endpoint as it comes: a first-contact answer, or the
/// outcome of storage work its worker ran.
enum ReceiverInput {
    case answer(FirstContactAnswers.Posted)
    case stored(StorageOutcome)
}

/// First contact: the user's answers (`FirstContactAnswers`), and the outcomes of the
/// connection's storage worker (which rings its doorbell itself), for `ReceiverEndpoint`.
struct AnswerInputs: EndpointInputs {
    let answers: FirstContactAnswers?
    let worker: StorageWorker?
    init(_ answers: FirstContactAnswers?, worker: StorageWorker? = nil) {
        self.answers = answers
        self.worker = worker
    }
    func take() -> [ReceiverInput] {
        (answers?.take().map { [ReceiverInput.answer($0)] } ?? []) + (worker?.takeOutcomes().map(ReceiverInput.stored) ?? [])
    }
    func ring(_ doorbell: (@Sendable () -> Void)?) { answers?.ring(doorbell) }
}

/// The receiver as its runner drives it: the session, and the first-contact request its user is
/// being asked about, so that an answer applies only to the request it answers.
struct ReceiverEndpoint: DatagramEndpoint {
    typealias Failure = SessionError
    var session: ReceiverSession
    /// The request the user is being asked about, if any.
    private var asking: ApprovalRequest?
    /// Where the session's storage work runs (a session that defers storage); nil: it runs none.
    let worker: StorageWorker?

    init(session: ReceiverSession, worker: StorageWorker? = nil) {
        self.session = session
        self.worker = worker
    }

    /// Hands the storage work the session made to the worker (the pump calls this at every turn,
    /// through `takeEvents`).
    private mutating func startStorageWork() {
        guard let worker else { return }
        for work in session.takeStorageWork() { worker.run(work) }
    }

    /// The connection ended (after `session.linkLost`): hands the session the outcomes its
    /// worker has in (the shared state learns of the files), without waiting; returns whether
    /// work is still out.
    mutating func settleStorage(now: Instant) -> Bool {
        guard let worker else { return false }
        startStorageWork()
        for outcome in worker.takeOutcomes() { try? session.storageDone(outcome, now: now) }
        return session.isAwaitingStorage
    }

    mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { session.nextDatagram(now: now) }
    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) { try session.receive(datagram: datagram, now: now) }
    mutating func handleTimers(now: Instant) throws(SessionError) { try session.handleTimers(now: now) }
    var nextDeadline: Instant? { session.nextDeadline }
    var status: ConnectionStatus { session.status }
    mutating func takeEvents() -> [ReceiverSession.Event] {
        startStorageWork()
        let events = session.takeEvents()
        for case .approvalNeeded(let request) in events { asking = request }
        return events
    }
    mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        session.linkResized(maxDatagramSize: maxDatagramSize, peerMaxDatagramSize: peerMaxDatagramSize)
    }
    /// The user's answer, if it answers the request being asked about; a storage work's outcome.
    mutating func take(_ input: ReceiverInput, now: Instant) throws(SessionError) {
        let posted: FirstContactAnswers.Posted
        switch input {
        case .stored(let outcome):
            try session.storageDone(outcome, now: now)
            return
        case .answer(let answer):
            posted = answer
        }
        guard let request = asking, posted.request == request, session.isAwaitingApproval else { return }
        asking = nil
        try session.take(posted.answer, now: now)
    }
}
