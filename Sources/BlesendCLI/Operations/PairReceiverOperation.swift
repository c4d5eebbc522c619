import BlueZ
import Discovery
import Keys
import Pairing
import Pipeline
import Session
import SessionRunner
import Synchronization
import Transfer

/// `blerecv pair`: shows a code, advertises as a receiver that pairs, and runs one pairing at a
/// time (`PairingDesk`) until a sender that knew the code is trusted, or the time is up.
struct PairReceiverOperation {
    let identity: Identity
    /// The name this machine suggests to the sender; the name the sender's key is trusted under
    /// (nil: the one the sender suggests).
    let ownName: String
    let peerName: String?
    /// Where the sender's key is written.
    let trust: NamedKeyDirectory
    let adapter: String?
    let lifetime: Duration
    /// No spare advertisement while a sender is connected (`--one-link`).
    var oneLink = false
    let reporter: Reporter

    /// What the run ends with: the sender pinned, and the file its key is in.
    struct Paired {
        let peer: PairingPeer
        let name: String
        let path: String
        let alreadyTrusted: Bool
    }

    /// The desk and the outcome, shared by the accepting loop and the connections' tasks.
    private final class Shared: Sendable {
        let desk: Mutex<PairingDesk>
        let paired = Mutex<Paired?>(nil)
        init(_ desk: PairingDesk) { self.desk = Mutex(desk) }
    }

    func run() async throws(CLIError) {
        let clock = MonotonicClock()
        let shared = Shared(PairingDesk(now: clock.now, lifetime: lifetime))
        let peripheral: GattPeripheral
        do {
            let advertised = PairingAdvertisement(name: ownName).bytes
            peripheral = try await GattPeripheral.start(adapter: adapter, l2cap: false, extensions: TransferExtensions.pairing.rawValue,
                                                        discovery: { advertised })
        } catch {
            throw CLIError(error, adapter: adapter)
        }
        // One spare advertisement: a second sender can connect while one pairs, to be told `busy`.
        await peripheral.observeLinks(spares: oneLink ? 0 : 1) { _, _ in }
        let cleanup = Interrupts.shared.add { await peripheral.close() }
        defer { Interrupts.shared.remove(cleanup) }
        if let code = shared.desk.withLock({ $0.code }) { show(code) }

        let finished = AsyncStream<Void>.makeStream()
        let accepting = Task {
            await withTaskGroup(of: Void.self) { group in
                while let link = try? await peripheral.accept() {
                    group.addTask { await self.serve(link, shared: shared, clock: clock, peripheral: peripheral, finished: finished.continuation) }
                }
            }
        }
        let showingCodes = Task {
            // After a failed attempt's pause: the next code.
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                if let code = shared.desk.withLock({ $0.resumeIfDue(now: clock.now) }) { show(code) }
            }
        }
        // Until paired, or the lifetime is over.
        let timeout = Task {
            try? await Task.sleep(for: lifetime)
            finished.continuation.finish()
        }
        for await _ in finished.stream { break }
        timeout.cancel()
        showingCodes.cancel()
        await peripheral.close()
        accepting.cancel()
        await accepting.value
        guard let paired = shared.paired.withLock({ $0 }) else {
            reporter.event(JSONLine("pairing-ended", [("paired", .bool(false))]))
            throw CLIError(.notPaired, "no sender paired within \(CLIError.seconds(lifetime)) s; nothing was trusted",
                           hint: "run blerecv pair again (with --timeout SECONDS for longer), then blesend pair on the other machine")
        }
        reporter.event(JSONLine("paired", [("peer", .string(paired.name)), ("fingerprint", .string(paired.peer.publicKey.fingerprint)),
                                           ("path", .string(paired.path))]))
        let was = paired.alreadyTrusted ? " (it was trusted already)" : ""
        reporter.say("blerecv: paired with \(paired.name) [\(paired.peer.publicKey.fingerprint)]: trusted in \(paired.path)\(was)")
        reporter.say("blerecv: now receive with: blerecv\(trust.directoryOption)")
    }

    /// One connection: a pairing with the code on show, or a `busy` answer.
    private func serve(_ link: PeerConnection, shared: Shared, clock: MonotonicClock, peripheral: GattPeripheral,
                       finished: AsyncStream<Void>.Continuation) async {
        let decision = shared.desk.withLock { $0.linkArrived(now: clock.now) }
        let device = link.device ?? "a device"
        let inputs = InputMailbox<PairingReceiverSession.Input>()
        var guessed = false
        var failure: SessionError?
        do {
            _ = try await EndpointRunner.runPairingReceiver(over: link.transport, clock: clock, inputs: inputs, make: { size, peer, now throws(SessionError) in
                if case .pair(let code) = decision {
                    return try PairingReceiverSession(identity: identity, name: ownName, code: code, maxDatagramSize: size,
                                                      peerMaxDatagramSize: peer, now: now)
                }
                return try PairingReceiverSession(identity: identity, name: ownName, code: .random(), busy: true, maxDatagramSize: size,
                                                  peerMaxDatagramSize: peer, now: now)
            }) { event in
                switch event {
                case .codeTried:
                    guessed = true
                case .senderProven(let peer):
                    inputs.post(pin(peer, shared: shared))
                case .paired:
                    break
                case .answered(.busy):
                    reporter.say("blerecv: \(device) tried to pair while another pairing was open or paused: told busy")
                case .answered:
                    reporter.logger.info("\(device) sent something that is not a pairing request: refused")
                }
            }
        } catch {
            failure = error
        }
        await peripheral.disconnectPeer(of: link)
        await link.close()
        guard case .pair = decision else { return }
        // Paired: the run ends once P4 went out and the link is closed (not before: P4 must arrive).
        if shared.paired.withLock({ $0 != nil }) {
            finished.yield()
            return
        }
        guard guessed else {
            shared.desk.withLock { $0.attemptUnused() }
            return
        }
        let until = shared.desk.withLock { $0.attemptFailed(now: clock.now) }
        // (A sender whose code was wrong learns it from P2 and leaves: here that looks like a link
        // that ended.)
        let why = failure == .pairing(.wrongCode) ? "the code did not match" : "the sender did not prove the code (a wrong code, or it broke off)"
        let pause = until.duration(since: clock.now)
        reporter.event(JSONLine("pairing-failed", [("device", .string(device)), ("reason", .string(failure?.code ?? "linkLost")),
                                                   ("retry_in", .double(pause.seconds.rounded()))]))
        reporter.say("blerecv: a pairing attempt from \(device) failed: \(why). Nothing was trusted. That code is used up; a new one in \(Formatting.seconds(pause.seconds))")
    }

    /// Writes the proven sender's key into the trust directory; what to tell the session.
    private func pin(_ peer: PairingPeer, shared: Shared) -> PairingReceiverSession.Input {
        do {
            let pinned = try PinnedKeys.pin(peer.publicKey, chosen: peerName, suggested: peer.name, in: trust)
            shared.paired.withLock { $0 = Paired(peer: peer, name: pinned.name, path: pinned.path, alreadyTrusted: pinned.existed) }
            return .pinned
        } catch {
            reporter.error(CLIError(error))
            return .notPinned
        }
    }

    private func show(_ code: PairingPasscode) {
        reporter.event(JSONLine("pairing-code", [("code", .string(code.display)), ("name", .string(ownName)),
                                                 ("fingerprint", .string(identity.publicKey.fingerprint))]))
        reporter.sayAlways("blerecv: pairing code \(code.display)   (on the other machine: blesend pair, then type this code)")
    }
}
