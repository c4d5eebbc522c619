import Admission
import BlueZ
import Keys
import Session
import SessionRunner
import Synchronization

/// What the receiver server's decisions leave for the peripheral (which the server's thread must
/// not wait for). `ReceiveOperation` takes them in order: the local part of each (closing a
/// channel's transport) at once, and what it asks of bluetoothd or of a prompt as a `PeripheralCall`,
/// which `PeripheralCalls` runs beside the others (issue 31: one after another, a call waiting out
/// its D-Bus timeout held up every close behind it).
enum ReceiverChore: Sendable {
    /// The channel is over: close its transport, and end its device's link when `disconnect`
    /// (a refused or failed sender must not keep it) and the device holds no other channel. `handshakeTimedOut`: its sender never
    /// authenticated in time (over GATT, perhaps because bluetoothd stopped handing writes over).
    case end(ChannelID, disconnect: Bool, handshakeTimedOut: Bool)
    /// End a device's link that opened no transfer channel in time, unless it is not a sender's
    /// (`LinkStanding`: left up, and the policy has forgotten it). If bluetoothd does not end it,
    /// the link is announced again (`linkStillUp`): the policy ends it once more after its
    /// bare-link time, rather than leave it up for good.
    case disconnect(String)
    /// First contact: the prompt's channel ended; wait for the prompt, then `gate` its outcome.
    case settle(OpenChannels.Prompt, gate: @Sendable (FirstContactPrompt.Outcome) -> Void)

    /// Does the local part now; what is left for bluetoothd or the prompt, if anything.
    func closeAndCall(channels: OpenChannels) async -> PeripheralCall? {
        switch self {
        case .end(let channel, let disconnect, let handshakeTimedOut):
            guard let link = channels.end(channel) else { return nil }
            await link.close()
            let endLink = disconnect && !channels.holds(device: link.device)
            let registerAgain = handshakeTimedOut && link.gattLink.map { !$0.receivedWrites } == true
            guard endLink || registerAgain else { return nil }
            return .endLink(link, disconnect: endLink, registerAgain: registerAgain)
        case .disconnect(let device):
            return .endBareLink(device)
        case .settle(let prompt, let gate):
            return .settle(prompt, gate: gate)
        }
    }
}

/// What a chore asks of bluetoothd, or of a first-contact prompt: each may take seconds.
enum PeripheralCall: Sendable {
    /// After a channel's close: end its device's link (`disconnect`), then register the service
    /// again if bluetoothd may have stopped handing its writes over (`registerAgain`).
    case endLink(PeerConnection, disconnect: Bool, registerAgain: Bool)
    case endBareLink(String)
    case settle(OpenChannels.Prompt, gate: @Sendable (FirstContactPrompt.Outcome) -> Void)

    /// Calls with the same key do the same: one running or waiting covers the next. Ending a
    /// device's link is keyed by the device; a prompt is never covered.
    var key: String? {
        switch self {
        case .endLink(let link, let disconnect, let registerAgain):
            guard disconnect, !registerAgain, let device = link.device else { return nil }
            return "link " + device
        case .endBareLink(let device): return "link " + device
        case .settle: return nil
        }
    }

    /// `ChoreSchedule` turned the call away (too many waiting): say so; a bare link is announced
    /// again, so that the policy tries later.
    func turnedAway(reporter: Reporter, linkStillUp: @Sendable (String) -> Void) {
        switch self {
        case .endLink(let link, let disconnect, _):
            reporter.logger.warning(disconnect
                ? "too many calls to bluetoothd waiting: the link of \(link.device ?? "a device") is left up for now"
                : "too many calls to bluetoothd waiting: the service is not registered again now")
        case .endBareLink(let device):
            reporter.logger.warning("too many calls to bluetoothd waiting: the link of \(device) is ended later")
            linkStillUp(device)
        case .settle:
            break
        }
    }

    func run(peripheral: GattPeripheral, reporter: Reporter, adapter: String?, linkStillUp: @Sendable (String) -> Void) async {
        switch self {
        case .endLink(let link, let disconnect, let registerAgain):
            if disconnect { await peripheral.disconnectPeer(of: link) }
            if registerAgain { await Self.registerAgain(after: link, peripheral: peripheral, reporter: reporter, adapter: adapter) }
        case .endBareLink(let device):
            switch await peripheral.endBareLink(device: device) {
            case .ended:
                reporter.logger.info("ended the link of \(device)")
            case .spared(let reason):
                reporter.logger.info("left the link of \(device) up: \(reason.rawValue), not a sender's")
            case .failed(let failure):
                reporter.logger.warning("could not end the link of \(device) (\(CLIError(failure, adapter: adapter).message)); trying again later")
                linkStillUp(device)
            }
        case .settle(let prompt, let gate):
            // A prompt still waiting is cancelled (a no, which pauses its sender as a decline does).
            // A yes whose key was written but came too late for the connection still counts from
            // the next one on.
            prompt.task.cancel()
            gate(await prompt.task.value)
        }
    }

    /// The peer subscribed but its writes never arrived: bluetoothd may have stopped handing this
    /// characteristic's writes over (`GattPeripheral.registerApplicationAgain`), or the peer
    /// subscribed and stayed silent: renew only once its link is gone.
    private static func registerAgain(after link: PeerConnection, peripheral: GattPeripheral, reporter: Reporter, adapter: String?) async {
        do {
            switch try await peripheral.registerApplicationAgain(after: link) {
            case .renew:
                reporter.logger.notice("no data reached us on that connection; registered the service with bluetoothd again")
            case .skipLinkUp:
                reporter.logger.notice("no data reached us on that connection; its link is still up, so the service stays registered as it is")
            case .skipTooSoon:
                reporter.logger.info("no data reached us on that connection; the service was registered again less than a minute ago")
            }
        } catch {
            reporter.logger.warning("registering the service again failed: \(CLIError(error, adapter: adapter).message)")
        }
    }
}

/// Runs the receiver's `PeripheralCall`s as `ChoreSchedule` says: several at once, each on a task
/// of its own; `finish()` waits for all of them.
final class PeripheralCalls: Sendable {
    private struct State {
        var schedule: ChoreSchedule<PeripheralCall>
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextTask = 0
    }
    private let state: Mutex<State>
    private let perform: @Sendable (PeripheralCall) async -> Void
    private let turnAway: @Sendable (PeripheralCall) -> Void

    /// Four calls at once: a receiver serves a few senders, and each ending needs one or two calls.
    init(concurrency: Int = 4, capacity: Int = 64, perform: @escaping @Sendable (PeripheralCall) async -> Void,
         turnAway: @escaping @Sendable (PeripheralCall) -> Void) {
        state = Mutex(State(schedule: ChoreSchedule(concurrency: concurrency, capacity: capacity)))
        self.perform = perform
        self.turnAway = turnAway
    }

    /// Runs `call` now or later, or turns it away. A prompt's settling is never turned away (the
    /// first-contact gate waits for it) and runs at once: it waits for a person, not for bluetoothd.
    func submit(_ call: PeripheralCall) {
        let decision = state.withLock { s -> ChoreSchedule<PeripheralCall>.Decision in
            if case .settle = call {
                start(call, key: nil, scheduled: false, in: &s)
                return .start
            }
            let decision = s.schedule.add(call, key: call.key)
            if decision == .start { start(call, key: call.key, scheduled: true, in: &s) }
            return decision
        }
        if decision == .full { turnAway(call) }
    }

    /// Waits until no call runs or waits.
    func finish() async {
        while let task = state.withLock({ $0.tasks.values.first }) { await task.value }
    }

    /// `scheduled`: the schedule counts it (and hands out the next call when it is done).
    private func start(_ call: PeripheralCall, key: String?, scheduled: Bool, in s: inout State) {
        let id = s.nextTask
        s.nextTask += 1
        s.tasks[id] = Task { [self] in
            await perform(call)
            state.withLock { s in
                if scheduled, let next = s.schedule.finished(key: key) { start(next.job, key: next.key, scheduled: true, in: &s) }
                s.tasks[id] = nil
            }
        }
    }
}

/// The connections the receiver server serves, by channel: written by the accepting task, read
/// by the chores and the server's thread.
final class OpenChannels: Sendable {
    /// First contact: the prompt asking about a channel's sender, and the key it asks about.
    struct Prompt: Sendable {
        let task: Task<FirstContactPrompt.Outcome, Never>
        let key: PublicKey
    }

    private struct State {
        var links: [ChannelID: PeerConnection] = [:]
        var prompts: [ChannelID: Prompt] = [:]
    }

    private let state = Mutex(State())

    func opened(_ link: PeerConnection, as channel: ChannelID) { state.withLock { $0.links[channel] = link } }

    /// The channel's connection, no longer kept.
    func end(_ channel: ChannelID) -> PeerConnection? { state.withLock { $0.links.removeValue(forKey: channel) } }

    func device(of channel: ChannelID) -> String? { state.withLock { $0.links[channel]?.device } }

    /// `l2cap` or `gatt`; empty for a channel not known.
    func transport(of channel: ChannelID) -> String {
        state.withLock { $0.links[channel]?.transportDescription.kind.rawValue } ?? ""
    }

    /// Whether a channel of `device` is kept (nil: unknown device, taken as yes).
    func holds(device: String?) -> Bool {
        guard let device else { return true }
        return state.withLock { $0.links.values.contains { $0.device == device } }
    }

    /// Its sender authenticated: over GATT, another device's call no longer ends the link.
    func authenticated(_ channel: ChannelID) { state.withLock { $0.links[channel] }?.gattLink?.markAuthenticated() }

    func setPrompt(_ prompt: Prompt, for channel: ChannelID) { state.withLock { $0.prompts[channel] = prompt } }

    func takePrompt(_ channel: ChannelID) -> Prompt? { state.withLock { $0.prompts.removeValue(forKey: channel) } }

    /// Every connection still kept (the receiver stops).
    func closeAll() async {
        let links = state.withLock { state in
            defer { state.links.removeAll() }
            return Array(state.links.values)
        }
        for link in links { await link.close() }
    }
}

/// The receiver's first session, whose state every connection's session shares
/// (`ReceiverSession.sharingState()`): made on the caller's task, then touched on the receiver
/// server's thread only (its `makeSession`, and what `onServerThread` runs there).
final class SessionBox: @unchecked Sendable {
    var session: ReceiverSession
    init(_ session: ReceiverSession) { self.session = session }
}
