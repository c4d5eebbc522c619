import Admission
import Glibc
import Pipeline
import Session

/// `ReceiverServer` on its pump's thread: takes what its users posted, asks the admission policy,
/// starts the admitted channels' connections, feeds the policy what their sessions say and when
/// they end, and runs the policy's timers in the pump's poll. It carries out the actions that
/// touch only the pump (admit, close, decline without asking) and reports every action.
final class ReceiverServerHost: PumpHost {
    typealias Connection = PumpedConnection<ReceiverEndpoint, AnswerInputs>

    /// An admitted channel while its connection runs.
    private final class Served {
        let connection: Connection
        let answers: FirstContactAnswers
        var authenticated = false
        /// The first-contact request its session asked about, while the user is asked.
        var asking: ApprovalRequest?

        init(connection: Connection, answers: FirstContactAnswers) {
            self.connection = connection
            self.answers = answers
        }
    }

    private let server: ReceiverServer
    private let makeSession: () -> ReceiverSession
    private let report: (ReceiverServer.Event) -> Void
    private var policy: AdmissionPolicy
    private var served: [ChannelID: Served] = [:]
    /// Which channel each running connection serves.
    private var channelOf: [ObjectIdentifier: ChannelID] = [:]
    /// Channels posted and not yet admitted or refused (only while the policy decides).
    private var deciding: [ChannelID: OpenedChannel] = [:]
    /// Connections admitted since the pump last took them.
    private var started: [any PumpSlot] = []
    /// Connections that ended while their storage worker had work out: their end is told once
    /// its outcome is in (`settleParked`), so that the shared state knows of it first.
    /// The pump never waits for a worker.
    private var parked: [(channel: ChannelID, entry: Served, endpoint: ReceiverEndpoint)] = []

    init(server: ReceiverServer, makeSession: @escaping () -> ReceiverSession, report: @escaping (ReceiverServer.Event) -> Void) {
        self.server = server
        self.makeSession = makeSession
        self.report = report
        policy = AdmissionPolicy(configuration: server.admission)
    }

    /// Open until closed and every parked connection's work is settled.
    var isOpen: Bool { !server.mailbox.isClosed || !parked.isEmpty }

    func takeNewSlots(now: Instant) -> [any PumpSlot] {
        settleParked(now: now)
        for input in server.mailbox.take() {
            switch input {
            case .linkUp(let device):
                decide(.linkUp(device), now: now)
            case .linkDown(let device):
                decide(.linkDown(device), now: now)
            case .call(let body):
                body()
            case .channel(let opened) where server.mailbox.isClosed:
                // Closing: nothing new is served.
                opened.port.stop()
                server.forget(opened.id)
                report(.admission(.refuse(opened.id, .busy(retryAfter: now))))
            case .channel(let opened):
                deciding[opened.id] = opened
                decide(.channelOpened(opened.id, device: opened.device), now: now)
                deciding[opened.id] = nil
            }
        }
        if server.isCutting {
            for entry in served.values { entry.connection.wake.raise(.cancelled) }
        }
        defer { started.removeAll() }
        return started
    }

    func pollEntries(now _: Instant) -> (entries: [pollfd], wakeBy: Instant) {
        ([pollfd(fd: server.mailbox.doorbell.fd, events: Int16(POLLIN), revents: 0)], policy.nextDeadline ?? .distantFuture)
    }

    func serve(_ ready: ArraySlice<pollfd>, now: Instant) {
        if ready[ready.startIndex].revents != 0 { server.mailbox.doorbell.drain() }
        carryOut(policy.handleTimers(now: now), now: now)
    }

    func ended(_ slot: any PumpSlot, now: Instant) {
        guard let channel = channelOf.removeValue(forKey: ObjectIdentifier(slot)),
              let entry = served.removeValue(forKey: channel) else { return }
        // What the session says as its connection ends (partials wait for their senders).
        var endpoint = entry.connection.endpoint
        endpoint.session.linkLost(now: now)
        guard !endpoint.settleStorage(now: now) else {
            parked.append((channel, entry, endpoint))
            return
        }
        finish(channel, entry, endpoint, now: now)
    }

    /// The parked connections whose workers are done: their ends are told.
    private func settleParked(now: Instant) {
        guard !parked.isEmpty else { return }
        let waiting = parked
        parked.removeAll()
        for var (channel, entry, endpoint) in waiting {
            if endpoint.settleStorage(now: now) {
                parked.append((channel, entry, endpoint))
            } else {
                finish(channel, entry, endpoint, now: now)
            }
        }
    }

    /// A connection's end, told: its session's last events, to the policy, and to the user.
    private func finish(_ channel: ChannelID, _ entry: Served, _ endpoint: ReceiverEndpoint, now: Instant) {
        var endpoint = endpoint
        for event in endpoint.session.takeEvents() { report(.session(channel, event)) }
        let result = entry.connection.outcome ?? .success(.linkLost)
        decide(.channelClosed(channel, outcome: Self.outcome(result, authenticated: entry.authenticated)), now: now)
        server.forget(channel)
        report(.ended(channel, result, authenticated: entry.authenticated))
    }

    /// How a connection's end counts for admission: before authentication every end is a failed
    /// handshake (a refusal, a timeout, a peer that left), after it an order or a loss.
    static func outcome(_ result: Result<ConnectionEnding, SessionError>, authenticated: Bool) -> ChannelOutcome {
        guard authenticated else { return .handshakeFailed }
        return result == .success(.finished) ? .ended : .lost
    }

    // MARK: - Sessions

    /// Starts a channel's session; with `busy`, one that only tells its sender to come back later.
    private func start(_ opened: OpenedChannel, now: Instant, busy: BusyAnswer? = nil) {
        var session = makeSession()
        // Disk work runs on the connection's own worker, off the pump.
        session.defersStorage = true
        let transport = opened.port.transport
        do {
            try session.accept(maxDatagramSize: transport.maxDatagramSize, peerMaxDatagramSize: transport.peerMaxDatagramSize,
                               now: now, wallClock: EndpointRunner.wallClock(), busy: busy)
        } catch {
            opened.port.stop()
            server.forget(opened.id)
            decide(.channelClosed(opened.id, outcome: .lost), now: now)
            report(.ended(opened.id, .failure(error), authenticated: false))
            return
        }
        // An outcome wakes the connection, or the host once the connection is parked.
        let worker = StorageWorker(label: "blerecv.storage.\(opened.id)") { [doorbell = opened.doorbell, host = server.mailbox.doorbell] in
            doorbell.ring()
            host.ring()
        }
        let inputs = AnswerInputs(opened.answers, worker: worker)
        inputs.ring { [doorbell = opened.doorbell] in doorbell.ring() }
        let id = opened.id
        let connection = Connection(ReceiverEndpoint(session: session, worker: worker), port: opened.port, wake: opened.wake, doorbell: opened.doorbell,
                                    inputs: inputs, clock: server.clock) { [unowned self] events in
            self.said(events, on: id)
        }
        served[id] = Served(connection: connection, answers: opened.answers)
        channelOf[ObjectIdentifier(connection)] = id
        started.append(connection)
    }

    /// A channel's session spoke: reported, and what admission cares about goes to the policy.
    private func said(_ events: [ReceiverSession.Event], on channel: ChannelID) {
        guard !events.isEmpty else { return }
        let now = server.clock.now
        var progressed = false
        for event in events {
            report(.session(channel, event))
            guard let entry = served[channel] else { continue }
            switch event {
            case .authenticated(_, let fingerprint):
                entry.authenticated = true
                decide(.authenticated(channel, peer: PeerKeyID(Array(fingerprint.utf8))), now: now)
                if entry.asking.take() != nil { decide(.promptFinished(channel), now: now) }
            case .approvalNeeded(let request):
                entry.asking = request
                decide(.promptRequested(channel), now: now)
            case .refused:
                if entry.asking.take() != nil { decide(.promptFinished(channel), now: now) }
            case .transfer:
                progressed = progressed || entry.authenticated
            }
        }
        if progressed { decide(.progress(channel), now: now) }
    }

    // MARK: - Admission

    private func decide(_ input: AdmissionInput, now: Instant) {
        carryOut(policy.handle(input, now: now), now: now)
    }

    private func carryOut(_ actions: [AdmissionAction], now: Instant) {
        for action in actions {
            report(.admission(action))
            switch action {
            case .admit(let channel):
                if let opened = deciding[channel] { start(opened, now: now) }
            case .answerBusy(let channel, let retryAfter, let ahead):
                if let opened = deciding[channel] {
                    start(opened, now: now, busy: BusyAnswer(retryAfter: retryAfter.duration(since: now), ahead: ahead))
                }
            case .refuse(let channel, _):
                if let opened = deciding[channel] {
                    opened.port.stop()
                    server.forget(channel)
                }
            case .close(let channel, _):
                served[channel]?.connection.wake.raise(.cancelled)
            case .promptBusy(let channel):
                if let entry = served[channel], let request = entry.asking.take() { entry.answers.post(.decline, to: request) }
            case .disconnect, .advertise, .showPrompt, .reregister, .reregisterDeferred:
                break
            }
        }
    }
}
