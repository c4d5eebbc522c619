import Admission
import DequeModule
import Pipeline
import Session
import SocketIO
import Synchronization

/// A receiver that serves several senders at once: every transfer channel its transports accept
/// runs as one connection on one real-time pump (one thread, one poll set), and an
/// `AdmissionPolicy` decides which channels are served, when a bare link or a silent handshake is
/// cut off, and when to advertise. The policy's deadlines are wake-up times in the same poll.
///
/// The server's user (the CLI over BlueZ, or a test in memory) tells it of links (`linkUp`,
/// `linkDown`) and channels (`open`) from any task; `run` drives everything on a thread of its
/// own and reports on it (`Event`). What needs I/O outside the pump (disconnecting a device,
/// advertising, closing a refused channel's transport) is reported as the policy's action for
/// the user to carry out.
public final class ReceiverServer: Sendable {
    /// What `run` reports, on the server's thread, in the order it happened.
    public enum Event: Sendable {
        /// The policy's decision. The user carries out `refuse` (close the channel's transport),
        /// `disconnect`, `advertise` and `reregister`; the server has done the rest (`admit`,
        /// `close`, `promptBusy`: the sender is declined without asking).
        case admission(AdmissionAction)
        /// What a channel's session said.
        case session(ChannelID, ReceiverSession.Event)
        /// An admitted channel's connection ended (`authenticated`: its sender authenticated). The
        /// user closes its transport.
        case ended(ChannelID, Result<ConnectionEnding, SessionError>, authenticated: Bool)
    }

    /// What the users' tasks post for the pump's thread.
    enum Input: Sendable {
        case linkUp(DeviceID)
        case linkDown(DeviceID)
        case channel(OpenedChannel)
        case call(@Sendable () -> Void)
    }

    let admission: AdmissionConfiguration
    let clock: any EndpointClock
    let mailbox: Mailbox<Input>
    private let channelNumbers = Atomic<UInt64>(0)
    private let cutting = Atomic<Bool>(false)
    /// Each channel's first-contact answers, from `open` until its connection ends.
    private let answers = Mutex<[ChannelID: FirstContactAnswers]>([:])

    /// Nil when no descriptor can be had for the mailbox's doorbell.
    public init?(admission: AdmissionConfiguration = .init(), clock: some EndpointClock = MonotonicClock()) {
        guard let mailbox = Mailbox<Input>() else { return nil }
        self.admission = admission
        self.clock = clock
        self.mailbox = mailbox
    }

    /// A device's LE link came up.
    public func linkUp(_ device: DeviceID) { _ = mailbox.post(.linkUp(device)) }

    /// A device's LE link went down (its channels end on their own as their transports close).
    public func linkDown(_ device: DeviceID) { _ = mailbox.post(.linkDown(device)) }

    /// A number for a channel about to be opened, never given before by this server.
    public func newChannel() -> ChannelID { ChannelID(channelNumbers.add(1, ordering: .relaxed).newValue) }

    /// Serves (if the policy admits it) the transfer channel `id` (from `newChannel()`) from
    /// `device`, under which number the server reports it. False when no descriptor can be had
    /// for it or the server is closed: nothing is reported of it, and the caller closes the transport.
    public func open(_ transport: any DatagramTransport, as id: ChannelID, from device: DeviceID) async -> Bool {
        guard let wake = WakeSignal(), let doorbell = Doorbell(),
              let port = await makePort(for: transport, wake: wake, doorbell: doorbell) else { return false }
        let channelAnswers = FirstContactAnswers()
        answers.withLock { $0[id] = channelAnswers }
        let opened = OpenedChannel(id: id, device: device, port: port, wake: wake, doorbell: doorbell, answers: channelAnswers)
        guard mailbox.post(.channel(opened)) else {
            port.stop()
            forget(id)
            return false
        }
        return true
    }

    /// `open` with a new number: the number, or nil as `open` says false.
    public func open(_ transport: any DatagramTransport, from device: DeviceID) async -> ChannelID? {
        let id = newChannel()
        return await open(transport, as: id, from: device) ? id : nil
    }

    /// Runs `body` on the server's thread at its next turn (where the sessions' state lives: a key
    /// trusted after its connection ended, say). Dropped once the server is closed.
    public func onServerThread(_ body: @escaping @Sendable () -> Void) { _ = mailbox.post(.call(body)) }

    /// First contact: the user's answer to `request`, asked on `channel`'s behalf. Dropped when the
    /// channel has ended.
    public func post(_ answer: FirstContactAnswer, to request: ApprovalRequest, on channel: ChannelID) {
        answers.withLock { $0[channel] }?.post(answer, to: request)
    }

    /// Stops taking channels; `run` returns once every connection has ended (close their
    /// transports to hurry that).
    public func close() { mailbox.close() }

    /// Stops taking channels and ends every connection now (as lost links; partials wait for
    /// their senders); `run` returns at once.
    public func shutDown() {
        cutting.store(true, ordering: .sequentiallyConsistent)
        mailbox.close()
    }

    /// `shutDown` was called.
    var isCutting: Bool { cutting.load(ordering: .sequentiallyConsistent) }

    /// Drives every channel until `close()` and the end of the last connection. `makeSession`
    /// gives each admitted channel its session (sessions that share one receiver's state); it and
    /// `report` are called on the server's thread only.
    public func run(makeSession: () -> ReceiverSession, report: (Event) -> Void) async {
        await LoopThread.run {
            withoutActuallyEscaping(makeSession) { makeSession in
                withoutActuallyEscaping(report) { report in
                    let host = ReceiverServerHost(server: self, makeSession: makeSession, report: report)
                    var pump = RealTimePump([])
                    pump.run(clock: clock, host: host)
                }
            }
        }
    }

    /// The channel's connection ended: later answers for it are dropped.
    func forget(_ channel: ChannelID) {
        _ = answers.withLock { $0.removeValue(forKey: channel) }
    }
}

/// A channel a user opened, handed to the pump's thread: its port and signals were made on the
/// user's task and are touched only by the pump from then on.
struct OpenedChannel: @unchecked Sendable {
    let id: ChannelID
    let device: DeviceID
    let port: any PumpPort
    let wake: WakeSignal
    let doorbell: Doorbell
    let answers: FirstContactAnswers
}

/// Inputs posted from any thread for a pump's host, and the doorbell that wakes the pump for them.
/// At most `capacity` items wait (issue 31): the pump takes them all at each turn, so a full
/// mailbox means its thread is stuck, and what comes then is dropped as after `close()` (a channel
/// is refused, a link event lost) rather than held without bound.
final class Mailbox<Item: Sendable>: Sendable {
    private struct State {
        var items: Deque<Item> = []
        var closed = false
    }

    private let state = Mutex(State())
    let doorbell: Doorbell
    let capacity: Int

    init?(capacity: Int = 1024) {
        guard let doorbell = Doorbell() else { return nil }
        self.doorbell = doorbell
        self.capacity = max(capacity, 1)
    }

    /// Queues `item` and wakes the pump; false (dropped) once closed, or while `capacity` items wait.
    func post(_ item: Item) -> Bool {
        let posted = state.withLock { state in
            guard !state.closed, state.items.count < capacity else { return false }
            state.items.append(item)
            return true
        }
        if posted { doorbell.ring() }
        return posted
    }

    /// Everything posted so far, oldest first.
    func take() -> [Item] {
        state.withLock { state in
            defer { state.items.removeAll() }
            return Array(state.items)
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    func close() {
        state.withLock { $0.closed = true }
        doorbell.ring()
    }
}
