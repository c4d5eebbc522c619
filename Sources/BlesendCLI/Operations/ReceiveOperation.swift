import BlueZ
import Discovery
import Keys
import Pipeline
import Session
import SessionRunner
import Transfer

/// Advertises, accepts one sender at a time, runs the receiver session, reports.
struct ReceiveOperation {
    let identity: Identity
    let trust: TrustStore
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
    let reporter: Reporter

    private final class Tally {
        var saved = 0
        var failures: [CLIError] = []
        var sessionEnded = false
        /// A sender authenticated on the current connection.
        var authenticated = false
        /// Why the current connection's sender was refused, if it was (for the log line at its end).
        var refusal: String?
        var current: (name: String, size: UInt64?, at: ContinuousClock.Instant, offset: UInt64)?
        /// The prompt about the current connection's unknown sender (cancelled when it ends), and
        /// the key it asks about.
        var prompt: (task: Task<FirstContactPrompt.Outcome, Never>, key: PublicKey)?
        /// First contact: one prompt at a time, and the pause for senders declined recently.
        var gate = FirstContactGate()
        /// The current connection's device, for `gate`.
        var device: String?
        /// The session's clock, for `gate`.
        let clock: MonotonicClock

        init(clock: MonotonicClock) { self.clock = clock }
    }

    func run() async throws(CLIError) {
        let configuration = SessionConfiguration()
        var session = ReceiverSession(identity: identity, trust: trust, store: store, configuration: configuration,
                                      asksAboutStrangers: askingInto != nil)
        let answers = askingInto.map { _ in FirstContactAnswers() }
        if privateDiscovery { try await checkAddressPrivacy() }
        let peripheral: GattPeripheral
        do {
            peripheral = try await GattPeripheral.start(adapter: adapter, l2cap: l2cap, extensions: session.extensions.rawValue,
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
            }
        }
        if let psm = peripheral.l2capPSM {
            reporter.logger.info("L2CAP channels on PSM 0x\(String(psm, radix: 16)) (\(GattPeripheral.l2capReceiveMTU)-byte SDUs), GATT besides")
        } else if let why = peripheral.l2capUnavailable {
            reporter.logger.notice("no L2CAP channel (\(why)); serving GATT only")
        } else {
            reporter.logger.info("--no-l2cap: serving GATT only")
        }
        let cleanup = Interrupts.shared.add { await peripheral.close() }
        defer { Interrupts.shared.remove(cleanup) }
        reporter.event(JSONLine("listening", [("adapter", .of(adapter)), ("fingerprint", .string(identity.publicKey.fingerprint)),
                                              ("trusted", .int(Int64(trust.peers.count)))]))
        reporter.say("blerecv: waiting for senders (\(trust.peers.count) trusted; this receiver's fingerprint \(identity.publicKey.fingerprint))")
        // One clock for the session's whole life: partial transfers age on it across connections.
        let clock = MonotonicClock()
        let tally = Tally(clock: clock)
        var failure: CLIError?
        while true {
            let link: PeerConnection
            do {
                link = try await peripheral.accept()
            } catch {
                // SIGINT/SIGTERM closed the peripheral: the handler exits with its own status, so
                // do not print a bogus "link was lost" error meanwhile.
                while Interrupts.shared.isInterrupting { try? await Task.sleep(for: .seconds(1)) }
                failure = CLIError(error, adapter: adapter)
                break
            }
            reporter.connected(device: link.device, transport: link.transportDescription)
            tally.sessionEnded = false
            tally.authenticated = false
            tally.refusal = nil
            tally.device = link.device
            do {
                let ending = try await EndpointRunner.runReceiver(&session, over: link.transport, clock: clock, answers: answers) {
                    handle($0, tally, answers: answers, approvalTimeout: configuration.approvalTimeout)
                }
                if let note = Self.connectionEndedNote(ending, refusal: tally.refusal) { reporter.logger.info("\(note)") }
                // A refused peer must not keep the BLE link once the refusal is delivered.
                if !tally.authenticated { await peripheral.disconnectPeer(of: link) }
            } catch {
                reporter.logger.notice("connection ended: \(error)")
                // A peer that failed the handshake, fell silent or broke the protocol must not keep
                // the BLE link (closing our sockets alone leaves it connected).
                await link.close()
                await peripheral.disconnectPeer(of: link)
                if error == .handshakeTimeout, let gatt = link.gattLink, !gatt.receivedWrites {
                    // The peer subscribed but its writes never arrived: bluetoothd may have stopped
                    // handing this characteristic's writes over (GattPeripheral.registerApplicationAgain),
                    // or the peer subscribed and stayed silent: renew only once its link is gone.
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
            await link.close()
            await settlePrompt(tally, session: &session)
            if once && tally.sessionEnded { break }
        }
        session.shutdown()
        await peripheral.close()
        if let failure { throw failure }
        if let first = tally.failures.first { throw first }
    }

    /// The log line (`-v`) for a connection that ended without an error of its own. A refused
    /// sender hangs up once it reads the refusal, which the runner sees as a lost link: the line
    /// says why it was refused, as the line for people and the `refused` event do (with `--json`
    /// it is the only word of it on standard error).
    static func connectionEndedNote(_ ending: EndpointRunner.Ending, refusal: String?) -> String? {
        switch ending {
        case .linkLost: "connection ended: " + (refusal ?? "link lost")
        case .finished: refusal.map { "connection ended: " + $0 }
        }
    }

    /// The connection is over: a prompt still waiting is cancelled (a no, which pauses its sender
    /// as a decline does). A yes whose key was written but came too late for the connection still
    /// counts from the next one on.
    private func settlePrompt(_ tally: Tally, session: inout ReceiverSession) async {
        guard let prompt = tally.prompt.take() else { return }
        prompt.task.cancel()
        let outcome = await prompt.task.value
        if case .accepted(let name) = outcome {
            session.trust(.init(name: name, key: prompt.key))
            tally.gate.settle(.accepted, now: tally.clock.now)
        } else {
            tally.gate.settle(.declined, now: tally.clock.now)
        }
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
        for peer in trust.peers {
            do {
                keys.append(try DiscoveryKey.forReceiver(identity: identity, sender: peer.key))
            } catch {
                reporter.logger.warning("\(peer.name)'s key cannot be listed for private discovery (\(error))")
            }
        }
        reporter.logger.info("private discovery: listing \(keys.count) trusted sender(s), a new salt with every advertisement")
        return { [keys] in DiscoveryAdvertisement.make(salt: .random(), keys: keys) }
    }

    private func handle(_ event: ReceiverSession.Event, _ tally: Tally, answers: FirstContactAnswers?, approvalTimeout: Duration) {
        switch event {
        case .approvalNeeded(let request):
            guard let answers, let directory = askingInto else { return }
            let now = tally.clock.now
            switch tally.gate.admit(FirstContactGate.subjects(key: request.key.bytes, device: tally.device), now: now) {
            case .ask:
                break
            case .busy:
                answers.post(.decline, to: request)
                reporter.say("blerecv: declined an unknown sender [\(request.fingerprint)] without asking: another first contact is being asked about")
                return
            case .pausedUntil(let until):
                answers.post(.decline, to: request)
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
                answers.post(outcome.answer, to: request)
                return outcome
            }
            tally.prompt = (task, request.key)
        case .authenticated(let sender, let fingerprint):
            tally.authenticated = true
            reporter.event(JSONLine("handshake", [("peer", .string(sender)), ("fingerprint", .string(fingerprint))]))
            reporter.say("blerecv: \(sender) connected [\(fingerprint)]")
        case .refused(let reason):
            let text: String
            switch reason {
            case .unknownSender(let fingerprint):
                text = "refused a sender whose key is not trusted [\(fingerprint)]"
            case .replayedHandshake(let sender):
                text = "refused a replayed handshake claiming to be \(sender)"
            case .malformedHandshake:
                text = "refused a handshake that did not decrypt (the sender pinned another receiver key, or it was damaged)"
            case .clockAhead(let sender, let seconds):
                text = "refused \(sender): its clock is \(seconds) s ahead of this receiver's (at most 10 minutes allowed); check both clocks"
            case .badOpening(let sender):
                text = "refused \(sender): malformed opening"
            case .notApproved(let fingerprint):
                text = "refused the unknown sender [\(fingerprint)]: not accepted"
            case .approvalTimedOut(let fingerprint):
                text = "refused the unknown sender [\(fingerprint)]: no answer in time"
            }
            tally.refusal = text
            reporter.event(JSONLine("refused", [("reason", .string(text))]))
            reporter.say("blerecv: \(text)")
        case .transfer(.fileStarted(_, let name, let size, let resumedAt)):
            if resumedAt > 0 {
                reporter.event(JSONLine("resumed", [("name", .string(name)), ("offset", .of(resumedAt))]))
            }
            tally.current = (name, size, ContinuousClock.now, resumedAt)
        case .transfer(.progress(let name, let received, let size)):
            let start = tally.current?.at ?? ContinuousClock.now
            reporter.progress(name: name, done: received, total: size, startedAt: start, startOffset: tally.current?.offset ?? 0)
        case .transfer(.fileSaved(let sender, let name, let storedName, let size)) where name.contains("/"):
            // A file of a folder: the folder appears (and is reported) once all of it is there.
            tally.saved += 1
            reporter.event(JSONLine("file-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .null),
                ("bytes", .of(size)), ("seconds", .double(0)), ("peer", .string(sender)),
            ]))
            reporter.logger.info("received \(name)  \(Formatting.bytes(size))  from \(sender) (its folder appears when complete)")
            tally.current = nil
        case .transfer(.folderSaved(let sender, let name, let storedName, let files)):
            let path = outDirectory.map { "\($0)/\(storedName)" } ?? storedName
            reporter.event(JSONLine("folder-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .string(path)),
                ("files", .int(Int64(files))), ("peer", .string(sender)),
            ]))
            var line = "blerecv: received folder \(name)/  \(files) file\(files == 1 ? "" : "s")  from \(sender)  -> \(path)"
            if storedName != name { line += "  (\(name) exists: saved as \(storedName))" }
            reporter.say(line)
        case .transfer(.fileSaved(let sender, let name, let storedName, let size)):
            tally.saved += 1
            let seconds = tally.current.map { (ContinuousClock.now - $0.at).seconds } ?? 0
            let path = outDirectory.map { "\($0)/\(storedName)" } ?? "-"
            reporter.event(JSONLine("file-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .string(path)),
                ("bytes", .of(size)), ("seconds", .double((seconds * 10).rounded() / 10)), ("peer", .string(sender)),
            ]))
            var line = "blerecv: received \(name)  \(Formatting.bytes(size))  in \(Formatting.seconds(seconds))"
            line += "  \(Formatting.rate(seconds > 0 ? Double(size) / seconds : 0))  from \(sender)  -> \(path)"
            if storedName != name { line += "  (\(name) exists: saved as \(storedName))" }
            reporter.say(line)
            tally.current = nil
        case .transfer(.fileFailed(let sender, let name, let failure)):
            let error = CLIError(receiving: failure, name: "\(name) from \(sender)")
            tally.failures.append(error)
            reporter.error(error)
        case .transfer(.sessionEnded(let sender)):
            tally.sessionEnded = true
            reporter.event(JSONLine("done", [("peer", .string(sender)), ("files", .int(Int64(tally.saved)))]))
            reporter.logger.info("\(sender) finished")
        }
    }
}
