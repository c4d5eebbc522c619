import Admission
import BlueZ
import Keys
import Session
import SessionRunner
import Synchronization

/// What the receiver server's decisions leave for the peripheral, carried out in order on a task
/// of their own (each is a D-Bus call or a transport's close, which the server's thread must not
/// wait for).
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

    func carryOut(peripheral: GattPeripheral, channels: OpenChannels, reporter: Reporter, adapter: String?,
                  linkStillUp: @Sendable (String) -> Void) async {
        switch self {
        case .end(let channel, let disconnect, let handshakeTimedOut):
            guard let link = channels.end(channel) else { return }
            await link.close()
            if disconnect, !channels.holds(device: link.device) { await peripheral.disconnectPeer(of: link) }
            if handshakeTimedOut, let gatt = link.gattLink, !gatt.receivedWrites {
                await Self.registerAgain(after: link, peripheral: peripheral, reporter: reporter, adapter: adapter)
            }
        case .disconnect(let device):
            switch await peripheral.endBareLink(device: device) {
            case .ended:
                break
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
