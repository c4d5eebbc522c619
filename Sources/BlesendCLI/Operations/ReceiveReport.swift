import Admission
import Pipeline
import Session
import SessionRunner
import Durable
import Transfer

/// What `blerecv` says about its senders (the lines for people, `--json` events, the `-v` log),
/// and what it keeps to say it: one `Channel` per transfer channel being served. Used on the
/// receiver server's thread only (`ReceiverServer.run`'s report, and what it runs through
/// `onServerThread`), hence unchecked.
final class ReceiveReport: @unchecked Sendable {
    /// One transfer channel while it is served.
    final class Channel {
        let id: ChannelID
        let device: String?
        /// Its sender authenticated.
        var authenticated = false
        /// Why its sender was refused, if it was (for the log line at its end).
        var refusal: String?
        var current: (name: String, size: UInt64?, at: ContinuousClock.Instant, offset: UInt64)?
        /// Its sender said goodbye.
        var sessionEnded = false
        /// First contact: the request its session asked about, until the user is asked.
        var request: ApprovalRequest?
        /// Why the admission policy closed it, if it did.
        var closedBy: ChannelCloseReason?
        /// Its sender's fingerprint, once it authenticated, and the transport (for the history).
        var fingerprint = ""
        /// Its sender's name, once it authenticated (on the progress lines).
        var sender: String?
        let transport: String

        init(id: ChannelID, device: String?, transport: String = "") {
            self.id = id
            self.device = device
            self.transport = transport
        }
    }

    let reporter: Reporter
    let outDirectory: String?
    /// Where each file stored or failed is written down (`blerecv history`).
    var history: History?
    private(set) var channels: [ChannelID: Channel] = [:]
    var saved = 0
    /// The first file that failed, what the receiver exits with once it stops (one error, not a
    /// list: a service runs for months).
    private(set) var firstFailure: CLIError?
    /// `--once`: a sender finished, and the receiver stops.
    var onceDone = false
    /// First contact: one prompt at a time, and the pause for senders declined recently.
    var gate = FirstContactGate()
    /// What the receiver is doing, for systemd and `blerecv status` (nil: not kept).
    var status: ReceiverStatus?
    /// The receiver's clock (for rates in the status).
    var clock = MonotonicClock()

    init(reporter: Reporter, outDirectory: String?) {
        self.reporter = reporter
        self.outDirectory = outDirectory
    }

    func opened(_ channel: ChannelID, device: String?, transport: String = "") -> Channel {
        let state = Channel(id: channel, device: device, transport: transport)
        channels[channel] = state
        status?.update { $0.opened(channel.rawValue, device: device, transport: transport) }
        return state
    }

    func closed(_ channel: ChannelID) -> Channel? {
        status?.update { $0.closed(channel.rawValue) }
        return channels.removeValue(forKey: channel)
    }

    /// The admission policy's decision, at `-v` (and in `--json`).
    func admission(_ action: AdmissionAction, device: (ChannelID) -> String?) {
        let line: String?
        switch action {
        case .admit(let channel):
            line = "admitted \(channel) from \(device(channel) ?? "an unknown device")"
        case .refuse(let channel, let why):
            line = "refused \(channel) from \(device(channel) ?? "an unknown device"): \(Self.text(why))"
        case .answerBusy(let channel, _, let ahead):
            line = "answering \(channel) from \(device(channel) ?? "an unknown device") busy: every slot is taken (\(ahead) waiting before it)"
        case .close(let channel, let why):
            line = "closed \(channel): \(why.rawValue)"
        case .disconnect(let device, let why):
            line = "ending the link of \(device.rawValue): \(why.rawValue) (no transfer channel in time)"
        case .advertise(let on):
            line = on ? "a slot is free again" : "every slot is taken: new senders are told to come back later"
        case .showPrompt, .promptBusy, .reregister, .reregisterDeferred:
            line = nil
        }
        guard let line else { return }
        reporter.logger.info("admission: \(line)")
        reporter.event(JSONLine("admission", [("decision", .string(Self.code(action))), ("detail", .string(line))]))
    }

    static func code(_ action: AdmissionAction) -> String {
        switch action {
        case .admit: "admitted"
        case .refuse(_, let why): "refused-" + why.code
        case .answerBusy: "answer-busy"
        case .close(_, let why): why.rawValue
        case .disconnect(_, let why): why.rawValue
        case .advertise(let on): on ? "advertising" : "not-advertising"
        case .showPrompt: "prompt"
        case .promptBusy: "prompt-busy"
        case .reregister: "reregister"
        case .reregisterDeferred: "reregister-deferred"
        }
    }

    private static func text(_ refusal: AdmissionRefusal) -> String {
        switch refusal {
        case .backoff: "its device failed a handshake recently (backing off)"
        case .busy: "every slot is taken"
        case .alreadyHandshaking: "its device has a handshake under way already"
        }
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

    /// What a channel's session said.
    func session(_ event: ReceiverSession.Event, on state: Channel) {
        switch event {
        case .approvalNeeded(let request):
            state.request = request
        case .authenticated(let sender, let fingerprint):
            state.authenticated = true
            state.fingerprint = fingerprint
            status?.update { $0.authenticated(state.id.rawValue, peer: sender, fingerprint: fingerprint) }
            state.sender = sender
            reporter.event(JSONLine("handshake", [("peer", .string(sender)), ("fingerprint", .string(fingerprint))]))
            reporter.say("blerecv: \(sender) connected [\(fingerprint)]")
        case .refused(let reason):
            let text = Self.text(reason)
            state.refusal = text
            reporter.event(JSONLine("refused", [("reason", .string(text))]))
            reporter.say("blerecv: \(text)")
        case .transfer(let event):
            transfer(event, on: state)
        }
    }

    private static func text(_ reason: SessionError.RefusalReason) -> String {
        switch reason {
        case .unknownSender(let fingerprint):
            "refused a sender whose key is not trusted [\(fingerprint)]"
        case .replayedHandshake(let sender):
            "refused a replayed handshake claiming to be \(sender)"
        case .malformedHandshake:
            "refused a handshake that did not decrypt (the sender pinned another receiver key, or it was damaged)"
        case .clockAhead(let sender, let seconds):
            "refused \(sender): its clock is \(seconds) s ahead of this receiver's (at most 10 minutes allowed); check both clocks"
        case .badOpening(let sender):
            "refused \(sender): malformed opening"
        case .notApproved(let fingerprint):
            "refused the unknown sender [\(fingerprint)]: not accepted"
        case .toldBusy(let sender):
            "told \(sender) to come back later: every slot is taken"
        case .replayGuardNotSaved(let sender, let failure):
            "refused \(sender): the replay guard could not be saved (\(failure)); check the state directory"
        case .approvalTimedOut(let fingerprint):
            "refused the unknown sender [\(fingerprint)]: no answer in time"
        }
    }

    private func transfer(_ event: TransferReceiver.Event, on state: Channel) {
        switch event {
        case .fileStarted(_, let name, let size, let resumedAt):
            if resumedAt > 0 {
                reporter.event(JSONLine("resumed", [("name", .string(name)), ("offset", .of(resumedAt))]))
            }
            state.current = (name, size, ContinuousClock.now, resumedAt)
            let now = clock.now
            status?.update { $0.fileStarted(state.id.rawValue, name: name, size: size, offset: resumedAt, at: now) }
        case .progress(let name, let received, let size):
            status?.update { $0.progress(state.id.rawValue, done: received) }
            let start = state.current?.at ?? ContinuousClock.now
            reporter.progress(name: name, peer: state.sender, done: received, total: size, startedAt: start, startOffset: state.current?.offset ?? 0)
        case .fileSaved(let sender, let name, let storedName, let size, _) where name.contains("/"):
            // A file of a folder: the folder appears (and is reported) once all of it is there.
            saved += 1
            reporter.event(JSONLine("file-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .null),
                ("bytes", .of(size)), ("seconds", .double(0)), ("peer", .string(sender)),
            ]))
            reporter.logger.info("received \(name)  \(Formatting.bytes(size))  from \(sender) (its folder appears when complete)")
            status?.update { $0.fileEnded(state.id.rawValue, name: name, peer: sender, bytes: size, saved: true) }
            state.current = nil
        case .folderSaved(let sender, let name, let storedName, let files):
            let path = outDirectory.map { "\($0)/\(storedName)" } ?? storedName
            reporter.event(JSONLine("folder-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .string(path)),
                ("files", .int(Int64(files))), ("peer", .string(sender)),
            ]))
            var line = "blerecv: received folder \(name)/  \(files) file\(files == 1 ? "" : "s")  from \(sender)  -> \(path)"
            if storedName != name { line += "  (\(name) exists: saved as \(storedName))" }
            reporter.say(line)
            record(.saved, peer: sender, path: path + "/", size: 0, hash: [], on: state)
        case .fileSaved(let sender, let name, let storedName, let size, let hash):
            saved += 1
            let seconds = state.current.map { (ContinuousClock.now - $0.at).seconds } ?? 0
            let path = outDirectory.map { "\($0)/\(storedName)" } ?? "-"
            reporter.event(JSONLine("file-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("path", .string(path)),
                ("bytes", .of(size)), ("seconds", .double((seconds * 10).rounded() / 10)), ("peer", .string(sender)),
            ]))
            var line = "blerecv: received \(name)  \(Formatting.bytes(size))  in \(Formatting.seconds(seconds))"
            line += "  \(Formatting.rate(seconds > 0 ? Double(size) / seconds : 0))  from \(sender)  -> \(path)"
            if storedName != name { line += "  (\(name) exists: saved as \(storedName))" }
            reporter.say(line)
            record(.saved, peer: sender, path: path, size: size, hash: hash, on: state)
            status?.update { $0.fileEnded(state.id.rawValue, name: name, peer: sender, bytes: size, saved: true) }
            state.current = nil
        case .fileFailed(let sender, let name, let failure):
            let error = CLIError(receiving: failure, name: "\(name) from \(sender)")
            if firstFailure == nil { firstFailure = error }
            reporter.error(error)
            record(.failed, peer: sender, path: outDirectory.map { "\($0)/\(name)" } ?? name, size: state.current?.size ?? 0, hash: [],
                   detail: error.message, on: state)
            status?.update { $0.fileEnded(state.id.rawValue, name: name, peer: sender, bytes: state.current?.size ?? 0, saved: false) }
        case .keptRemovedForRoom(let name):
            reporter.event(JSONLine("kept-removed", [("name", .string(name)), ("reason", .string("room"))]))
            reporter.logger.warning("removed \(name), kept for a resume whose sender is away, to make room on the disk for a transfer that is running")
        case .sessionEnded(let sender):
            state.sessionEnded = true
            reporter.event(JSONLine("done", [("peer", .string(sender)), ("files", .int(Int64(saved)))]))
            reporter.logger.info("\(sender) finished")
        }
    }

    /// Writes the file (or folder) that channel `state` stored, or failed, into the history.
    private func record(_ outcome: HistoryEntry.Outcome, peer: String, path: String, size: UInt64, hash: [UInt8],
                        detail: String = "", on state: Channel) {
        history?.record(HistoryEntry(time: History.now, direction: .received, outcome: outcome,
                                     resumed: (state.current?.offset ?? 0) > 0, size: size, airBytes: nil, hash: hash,
                                     peer: peer, fingerprint: state.fingerprint, path: path, transport: state.transport,
                                     detail: detail))
    }
}
