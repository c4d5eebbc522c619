import Admission
#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import Discovery
import Handshake
import Keys
import Pipeline
import Session
import SessionRunner
import Storage
import Transfer

/// Advertises, serves several senders at once (`ReceiverServer`, admitted by its policy), reports.
struct ReceiveOperation {
    let identity: Identity
    /// The trust directory, read again when it changes (before each new connection's handshake).
    let trust: LiveTrust
    let store: any FileStore
    let outDirectory: String?
    let adapter: String?
    /// Listen for L2CAP channels and publish the PSM (off: GATT only, as before L2CAP).
    let l2cap: Bool
    let once: Bool
    /// Advertise private-discovery data for the trusted senders (docs/protocol.md §1.1).
    var privateDiscovery = false
    /// Advertise private-discovery data even where the adapter's fixed address is on the air
    /// (`PrivateDiscoveryGate`).
    var allowPublicAddress = false
    /// Which adapter `adapter` names and its address privacy (the kernel's; tests give their own).
    var readAddressPrivacy: @Sendable (String?) async throws(BlueZError) -> (adapter: String, privacy: AddressPrivacy) = {
        (name: String?) async throws(BlueZError) in try await AddressPrivacy.resolving(adapter: name)
    }
    /// First contact (`--ask`): ask the user on the terminal about unknown senders, and trust
    /// those accepted by writing their keys into this directory (docs/protocol.md §8.5).
    var askingInto: String?
    /// Where accepted message 1 timestamps are kept across restarts (`StateLocation`).
    var replayMemory: (any ReplayMemory)?
    /// Where each file received or failed is written down (`blerecv history`).
    var history: History?
    /// Where completed transfers are kept across restarts (`StateLocation`).
    var completedMemory: (any CompletedMemory)?
    let reporter: Reporter

    /// How long a partial file waits for its sender (`--keep-partials`).
    var partialLifetime = SessionConfiguration().partialLifetime
    /// How many transfer channels are served at once (`--max-links`).
    var maxLinks = AdmissionConfiguration.defaultMaxLinks
    /// Whether to stay unconnectable while a device is connected (`--one-link`): no spare
    /// advertisement instances.
    var oneLink = false

    func run() async throws(CLIError) {
        let configuration = SessionConfiguration(partialLifetime: partialLifetime)
        if privateDiscovery { try await checkAddressPrivacy() }
        let base = SessionBox(ReceiverSession(identity: identity, trust: trust.store, store: store, configuration: configuration,
                                              asksAboutStrangers: askingInto != nil,
                                              provesKeyToStrangers: await provesKeyToStrangers(), replayMemory: replayMemory,
                                              completedMemory: completedMemory))
        // One clock for the receiver's whole life: partial transfers age on it across connections.
        let clock = MonotonicClock()
        // Kept state first, before the advertisement goes up: a sender that comes at once finds
        // its partial already checked (issue 32).
        let atStart = base.session.recoverPartials(now: clock.now)
        if atStart.kept > 0 { reporter.logger.notice("\(atStart.kept) partial file(s) or folder(s) of an earlier run kept for their senders to resume") }
        if atStart.removedFiles + atStart.removedFolders > 0 {
            reporter.logger.notice("removed what an earlier run kept and could not be resumed (expired after --keep-partials, damaged, cut short or unreadable): \(atStart.removedFiles) hidden file(s), \(atStart.removedFolders) folder(s)")
        }
        let peripheral: GattPeripheral
        do {
            peripheral = try await GattPeripheral.start(adapter: adapter, l2cap: l2cap, extensions: base.session.extensions.rawValue,
                                                        discovery: privateDiscovery ? discoveryData() : nil)
        } catch {
            throw CLIError(error, adapter: adapter)
        }
        await peripheral.observe { [reporter] event in
            switch event {
            case .bluetoothdGone:
                reporter.logger.warning("bluetoothd went away; waiting for it to come back")
            case .registeredAgain:
                reporter.logger.notice("bluetoothd is back: service and advertisement registered again")
            case .adapterPowered(let on):
                reporter.logger.notice(on ? "the adapter is powered on again; advertising" : "the adapter was powered off")
            case .advertisingInstancesExhausted(let links, let refusal):
                reporter.logger.notice("bluetoothd gives no more advertisement instances (\(refusal)): with \(links) links up no further sender can connect until one ends")
            }
        }
        if let psm = peripheral.l2capPSM {
            reporter.logger.info("L2CAP channels on PSM 0x\(String(psm, radix: 16)) (\(GattPeripheral.l2capReceiveMTU)-byte SDUs), GATT besides")
        } else if let why = peripheral.l2capUnavailable {
            reporter.logger.notice("no L2CAP channel (\(why)); serving GATT only")
        } else {
            reporter.logger.info("--no-l2cap: serving GATT only")
        }
        await warnAboutTheDeviceName()
        let status = ReceiverStatus(activity: ReceiverActivity(trusted: trust.store.peers.count, maxLinks: maxLinks),
                                    notifier: SystemdNotifier())
        ReloadSignal.install { [trust, reporter] in
            trust.forget()
            reporter.say("blerecv: SIGHUP: the trust directory \(trust.path) is read again before the next handshake")
            status.reloaded()
        }
        guard let server = ReceiverServer(admission: AdmissionConfiguration(maxLinks: maxLinks), clock: clock) else {
            await peripheral.close()
            throw CLIError(.localIO, "no file descriptor left for the receiver's event loop")
        }
        let channels = OpenChannels()
        let cleanup = Interrupts.shared.add {
            status.stopping()
            if let path = StatusSocketPath.serving()?.path { unlink(path) }
            server.close()
            await peripheral.close()
        }
        defer { Interrupts.shared.remove(cleanup) }
        reporter.event(JSONLine("listening", [("adapter", .of(adapter)), ("fingerprint", .string(identity.publicKey.fingerprint)),
                                              ("trusted", .int(Int64(trust.store.peers.count))), ("max_links", .int(Int64(maxLinks)))]))
        reporter.say("blerecv: waiting for senders (\(trust.store.peers.count) trusted; this receiver's fingerprint \(identity.publicKey.fingerprint))")
        // systemd (Type=notify): started once advertising; `systemctl status` shows what it does.
        status.ready()
        let statusServer = serveStatus(status)
        defer { statusServer?.close() }

        let (chores, choresIn) = AsyncStream.makeStream(of: ReceiverChore.self)
        await peripheral.observeLinks(spares: oneLink ? 0 : maxLinks) { [reporter] device, up in
            reporter.logger.debug("the link of \(device) is \(up ? "up" : "down")")
            if up { server.linkUp(DeviceID(device)) } else { server.linkDown(DeviceID(device)) }
        }
        let accepting = Task { [adapter, reporter] () -> CLIError? in
            defer { server.close() }
            while true {
                let link: PeerConnection
                do throws(BlueZError) {
                    link = try await peripheral.accept()
                } catch {
                    // SIGINT/SIGTERM closed the peripheral: the handler exits with its own status, so
                    // do not print a bogus "link was lost" error meanwhile.
                    while Interrupts.shared.isInterrupting { try? await Task.sleep(for: .seconds(1)) }
                    return CLIError(error, adapter: adapter)
                }
                reporter.connected(device: link.device, transport: link.transportDescription)
                // Kept before the server hears of it: its decisions may come at once.
                let channel = server.newChannel()
                channels.opened(link, as: channel)
                if await !server.open(link.transport, as: channel, from: DeviceID(link.device ?? "an unknown device")) {
                    _ = channels.end(channel)
                    await link.close()
                }
            }
        }
        let linkStillUp: @Sendable (String) -> Void = { server.linkUp(DeviceID($0)) }
        let calls = PeripheralCalls(perform: { [adapter, reporter] call in
            await call.run(peripheral: peripheral, reporter: reporter, adapter: adapter, linkStillUp: linkStillUp)
        }, turnAway: { [reporter] call in call.turnedAway(reporter: reporter, linkStillUp: linkStillUp) })
        let carrying = Task {
            for await chore in chores {
                if let call = await chore.closeAndCall(channels: channels) { calls.submit(call) }
            }
            await calls.finish()
        }
        let report = ReceiveReport(reporter: reporter, outDirectory: outDirectory)
        report.history = history
        report.status = status
        report.clock = clock
        let trustNews = TrustNews(reporter: reporter)
        await server.run(makeSession: {
            // A key added to or removed from the trust directory counts from this handshake on.
            let (refresh, store) = trust.refresh()
            if refresh != .unchanged { base.session.replaceTrust(store) }
            trustNews.tell(refresh, path: trust.path, trusted: store.peers.count)
            if refresh != .unchanged { status.update { $0.trusted = store.peers.count } }
            return base.session.sharingState()
        }) { event in
            self.handle(event, report: report, server: server, channels: channels, base: base, clock: clock, chores: choresIn,
                        approvalTimeout: configuration.approvalTimeout)
        }
        status.stopping()
        choresIn.finish()
        await carrying.value
        await channels.closeAll()
        // Closing the peripheral ends the accepting task (with an error that counts only if it,
        // not `--once`, ended the server).
        await peripheral.close()
        let failure = await accepting.value
        base.session.shutdown()
        if let failure, !report.onceDone { throw failure }
        if let first = report.firstFailure { throw first }
    }

    /// What the receiver server reported, on its thread: lines for people, the policy's
    /// decisions, and chores for the peripheral (`ReceiverChore`).
    private func handle(_ event: ReceiverServer.Event, report: ReceiveReport, server: ReceiverServer, channels: OpenChannels,
                        base: SessionBox, clock: MonotonicClock, chores: AsyncStream<ReceiverChore>.Continuation,
                        approvalTimeout: Duration) {
        switch event {
        case .admission(let action):
            report.admission(action) { channels.device(of: $0) }
            switch action {
            case .admit(let channel), .answerBusy(let channel, _, _):
                _ = report.opened(channel, device: channels.device(of: channel), transport: channels.transport(of: channel))
            case .refuse(let channel, _):
                chores.yield(.end(channel, disconnect: true, handshakeTimedOut: false))
            case .disconnect(let device, _):
                chores.yield(.disconnect(device.rawValue))
            case .advertise(let on):
                report.status?.update { $0.advertising = on }
                // Logged only. Withdrawing an advertisement instance under a live link leaves the
                // kernel with nothing to advertise once that link ends (SpareAdvertisements); a
                // sender that connects at the cap is answered busy instead (or refused, when one
                // is being answered already).
                break
            case .showPrompt(let channel):
                if let state = report.channels[channel] {
                    ask(state, on: channel, report: report, server: server, channels: channels, clock: clock, approvalTimeout: approvalTimeout)
                }
            case .promptBusy(let channel):
                if let request = report.channels[channel]?.request.take() {
                    reporter.say("blerecv: declined an unknown sender [\(request.fingerprint)] without asking: another first contact is being asked about")
                }
            case .close(let channel, let why):
                report.channels[channel]?.closedBy = why
            case .reregister, .reregisterDeferred:
                break
            }
        case .session(let channel, let event):
            guard let state = report.channels[channel] else { return }
            report.session(event, on: state)
            if case .authenticated = event { channels.authenticated(channel) }
        case .ended(let channel, let result, let authenticated):
            let state = report.closed(channel)
            reporter.logger.info("admission: \(channel) ended (\(authenticated ? "its sender authenticated" : "no sender authenticated"))")
            var handshakeTimedOut = state?.closedBy == .handshakeTimeout
            var failed = false
            switch result {
            case .success(let ending) where state?.closedBy == nil:
                if let note = ReceiveReport.connectionEndedNote(ending, refusal: state?.refusal) { reporter.logger.info("\(note)") }
            case .success:
                reporter.logger.notice("connection ended: \(state?.closedBy?.rawValue ?? "closed")")
            case .failure(let error):
                reporter.logger.notice("connection ended: \(error.code)")   // (its stable code, never a dump of the value)
                handshakeTimedOut = handshakeTimedOut || error == .handshakeTimeout
                failed = true
            }
            // A sender that was refused, failed the handshake, fell silent or broke the protocol
            // must not keep the BLE link (closing our sockets alone leaves it connected).
            chores.yield(.end(channel, disconnect: !authenticated || failed, handshakeTimedOut: handshakeTimedOut))
            if let prompt = channels.takePrompt(channel) {
                chores.yield(.settle(prompt, gate: { outcome in
                    server.onServerThread {
                        if case .accepted(let name) = outcome {
                            base.session.trust(.init(name: name, key: prompt.key))
                            report.gate.settle(.accepted, now: clock.now)
                        } else {
                            report.gate.settle(.declined, now: clock.now)
                        }
                    }
                }))
            }
            if once, state?.sessionEnded == true {
                report.onceDone = true
                server.shutDown()
            }
        }
    }

    /// First contact: the policy lets this channel's sender be asked about; the gate may still
    /// decline it without asking (a key or device refused recently).
    private func ask(_ state: ReceiveReport.Channel, on channel: ChannelID, report: ReceiveReport, server: ReceiverServer,
                     channels: OpenChannels, clock: MonotonicClock, approvalTimeout: Duration) {
        guard let request = state.request.take(), let directory = askingInto else { return }
        let now = clock.now
        switch report.gate.admit(FirstContactGate.subjects(key: request.key.bytes, device: state.device), now: now) {
        case .ask:
            break
        case .busy:
            server.post(.decline, to: request, on: channel)
            reporter.say("blerecv: declined an unknown sender [\(request.fingerprint)] without asking: another first contact is being asked about")
            return
        case .pausedUntil(let until):
            server.post(.decline, to: request, on: channel)
            let seconds = Int(until.duration(since: now).seconds.rounded(.up))
            reporter.say("blerecv: declined an unknown sender [\(request.fingerprint)] without asking: it (or its device) was refused recently; asks again in \(seconds) s")
            return
        }
        reporter.event(.firstContact(request))
        let prompt = FirstContactPrompt(write: { Console.err($0) }, trustDirectory: directory)
        // A little before the session's own limit, so that a yes typed at the last moment
        // still reaches this connection.
        let deadline = ContinuousClock.now + approvalTimeout - FirstContactAnswers.answerMargin
        let task = Task {
            var input = TerminalLineReader(deadline: deadline)
            let outcome = await prompt.ask(request, input: &input)
            server.post(outcome.answer, to: request, on: channel)
            return outcome
        }
        channels.setPrompt(OpenChannels.Prompt(task: task, key: request.key), for: channel)
    }

    /// `blerecv status`: answers on the runtime socket (`StatusSocketPath`) with what `status` holds;
    /// nil (said at -v, or as a warning when another receiver answers there) when it cannot.
    private func serveStatus(_ status: ReceiverStatus) -> StatusServer? {
        guard let place = StatusSocketPath.serving() else {
            reporter.logger.info("no runtime directory ($RUNTIME_DIRECTORY, $XDG_RUNTIME_DIR): blerecv status cannot reach this receiver")
            return nil
        }
        let (adapter, fingerprint, out, tag) = (self.adapter, identity.publicKey.fingerprint, outDirectory, identity.publicKey.fileTag)
        let clock = MonotonicClock()
        do throws(StatusServer.Failure) {
            return try StatusServer(folder: place.folder, path: place.path) {
                // (a store of its own: the receiver's keeps descriptors open that this must not touch)
                let partials = out.flatMap { try? DirectoryFileStore(directory: $0, modes: FileModes(umask: 0o077), temporaryTag: tag) }?
                    .keptPartials().count
                return StatusSnapshot(activity: status.snapshot, adapter: adapter, fingerprint: fingerprint,
                                      advertising: status.snapshot.advertising, outDirectory: out, partialsKept: partials,
                                      now: clock.now).json.text
            }
        } catch {
            switch error {
            case .inUse(let path): reporter.warn("another receiver answers blerecv status at \(path); this one will not")
            case .cannot(let why): reporter.warn("blerecv status cannot reach this receiver: \(why)")
            }
            return nil
        }
    }

    /// Anyone who connects reads the adapter's name (its GAP Device Name), no pairing needed: said
    /// once at start, with the fix, when it names this machine or its user (`doctor` says the
    /// same). Nothing when bluetoothd does not say.
    private func warnAboutTheDeviceName() async {
        guard case .success(let adapters)? = await BluetoothdSurvey.take().adapters,
              let warning = Self.deviceNameWarning(adapters, adapter: adapter, hostname: DoctorFacts.hostname(),
                                                   userName: DoctorFacts.userName()) else { return }
        reporter.warn(warning)
    }

    /// The warning about `adapter`'s name (the default adapter: the first), or nil when it gives
    /// nothing away or bluetoothd does not say.
    static func deviceNameWarning(_ adapters: [AdapterStatus], adapter: String?, hostname: String?, userName: String?) -> String? {
        guard let status = adapter.map({ name in adapters.first { $0.name == name } }) ?? adapters.first else { return nil }
        let check = DoctorJudge.deviceNameCheck(status, hostname: hostname, userName: userName)
        guard check.severity == .warn, let fix = check.fix else { return nil }
        return "\(status.name) is called \(check.detail); \(fix)"
    }

    /// Whether a sender this receiver does not trust is told so in message 2, which proves this
    /// receiver's key (`notTrusted`, docs/protocol.md §8.7), rather than with the one-byte refusal.
    /// Only where that tells a holder of the key nothing the advertisements do not: the adapter
    /// advertises from its fixed address (LE privacy off), and not with private discovery. With
    /// LE privacy on, or unknown, a stranger holding the key could otherwise follow the receiver
    /// from one private address to the next (docs/threat-model.md, "Identity hiding").
    private func provesKeyToStrangers() async -> Bool {
        guard !privateDiscovery, let found = try? await readAddressPrivacy(adapter), found.privacy == .off else { return false }
        reporter.logger.info("\(found.adapter) advertises from its fixed address: a sender it does not trust is told so in the handshake (notTrusted)")
        return true
    }

    /// Refuses private discovery on an adapter that shows its fixed address (`PrivateDiscoveryGate`).
    private func checkAddressPrivacy() async throws(CLIError) {
        let found: (adapter: String, privacy: AddressPrivacy)
        do {
            found = try await readAddressPrivacy(adapter)
        } catch {
            throw CLIError(error, adapter: adapter)
        }
        switch PrivateDiscoveryGate.judge(found.privacy, adapter: found.adapter, allowPublicAddress: allowPublicAddress) {
        case .advertise:
            reporter.logger.info("private discovery: \(found.adapter) advertises from resolvable private addresses")
        case .advertiseAnyway(let warning):
            reporter.warn(warning)
        case .refuse(let refusal):
            throw CLIError(refusal)
        }
    }

    /// Fresh private-discovery data for the trusted senders at every call (a new salt).
    private func discoveryData() -> @Sendable () -> [UInt8] {
        var keys: [DiscoveryKey] = []
        for peer in trust.store.peers {
            do {
                keys.append(try DiscoveryKey.forReceiver(identity: identity, sender: peer.key))
            } catch {
                reporter.logger.warning("\(peer.name)'s key cannot be listed for private discovery (\(error))")
            }
        }
        reporter.logger.info("private discovery: listing \(keys.count) trusted sender(s), a new salt with every advertisement")
        return { [keys] in DiscoveryAdvertisement.make(salt: .random(), keys: keys) }
    }
}
