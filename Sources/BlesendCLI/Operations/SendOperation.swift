import BlueZ
import Keys
import Pipeline
import Session
import SessionRunner
import Durable
import Storage
import Transfer

/// Scans, connects, runs the sender session, reconnects and resumes after a lost link, reports.
struct SendOperation {
    let identity: Identity
    let receiverKey: PublicKey
    let receiverName: String
    /// What to send: files, and folders as their items (`OutgoingItem`).
    let items: [OutgoingItem]
    let radio: RadioOptions
    /// Ask the receiver for compression (docs/protocol.md §8).
    var compresses = true
    /// Where files' transfer ids are kept until they are saved (nil: nowhere).
    var outgoing: OutgoingTransferIDs?
    /// Where each file sent or failed is written down (`blesend history`).
    var history: History?
    /// Finds and connects to receivers (BlueZ; a test may pass its own).
    let connector: any PeerConnector
    let reporter: Reporter

    private var adapter: String? { radio.adapter }
    private var timeout: Duration { radio.scanTimeout }

    /// Per-file bookkeeping for progress and summaries.
    private final class Progress {
        var started: [Int: (at: ContinuousClock.Instant, offset: UInt64)] = [:]
        var acknowledged: UInt64 = 0
        var savedFiles = 0
        var savedBytes: UInt64 = 0
        var failures: [CLIError] = []
        let begin = ContinuousClock.now
        /// The whole set, for the progress line: files (items with bytes) and their known sizes.
        var totalFiles = 0
        var totalBytes: UInt64 = 0
        /// Files and bytes of each tree saved so far, for the folder's summary line.
        var treeFiles: [TransferID: (files: Int, bytes: UInt64)] = [:]
        /// For the history: the transport of the current connection, the files that resumed.
        var transport = ""
        var resumed: Set<Int> = []
    }

    func run() async throws(CLIError) {
        var session = SenderSession(identity: identity, receiverKey: receiverKey, items: items, compresses: compresses)
        let progress = Progress()
        for item in items {
            guard let source = item.source else { continue }
            progress.totalFiles += 1
            progress.totalBytes += source.size ?? 0
        }
        var policy = ReconnectPolicy(scanTimeout: timeout, adapter: adapter)
        var next = policy.start
        while true {
            let scanTime: Duration, pause: Duration
            switch next {
            case .fail(let error): throw error
            case .connect(let time, let after): (scanTime, pause) = (time, after)
            }
            if pause > .zero { try? await Task.sleep(for: pause) }
            reporter.event(JSONLine("scanning", [("adapter", .of(adapter)), ("min_rssi", radio.minimumRSSI.map { .int(Int64($0)) } ?? .null)]))
            if !policy.reconnecting { reporter.logger.info("scanning for a receiver (timeout \(CLIError.seconds(timeout)) s)") }
            let link: PeerConnection
            do {
                link = try await connector.connect(scanTime: scanTime, excluding: policy.excluded, known: policy.untried) { [reporter] step in
                    switch step {
                    case .found(let device):
                        reporter.event(JSONLine("found", [("device", .string(device))]))
                        reporter.logger.debug("found \(device); connecting")
                    case .servicesResolved:
                        reporter.event(JSONLine("resolved", []))
                        reporter.logger.debug("services resolved; opening the transport")
                    case .connectAttemptFailed(let why):
                        reporter.logger.warning("connecting failed (\(why)); scanning again")
                    }
                }
            } catch {
                next = policy.connectFailed(error, now: ContinuousClock.now)
                if case .connect = next { reporter.logger.info("reconnecting failed (\(CLIError(error, adapter: nil).message)); trying again") }
                continue
            }
            policy.connected(to: link.device, others: link.otherReceivers)
            let cleanup = Interrupts.shared.add { await link.close() }
            reporter.connected(device: link.device, transport: link.transportDescription,
                               l2capFallback: link.l2capFallback.map { "\($0)" })
            progress.transport = link.transportDescription.kind.rawValue
            let before = progress.acknowledged
            let ending: EndpointRunner.Ending
            do {
                ending = try await EndpointRunner.runSender(
                    &session, over: link.transport, receiverExtensions: TransferExtensions(rawValue: link.receiverExtensions)) { handle($0, progress) }
            } catch {
                await link.close()
                Interrupts.shared.remove(cleanup)
                // Every file was confirmed and only the goodbye was missing: nothing to reconnect for.
                session.linkLost()
                if session.isFinished { break }
                let excludedBefore = policy.excluded
                next = policy.sessionFailed(error, device: link.device, progressed: progress.acknowledged > before,
                                            anyProgress: progress.acknowledged > 0, now: ContinuousClock.now)
                if policy.waitingForBusyReceiver, case .connect(_, let pause) = next {
                    let ahead = policy.sendersAhead
                    reporter.event(.busy(device: link.device, retryIn: pause, ahead: ahead))
                    reporter.clearLine()
                    let why = ahead.map { "receiver busy, waiting (\($0) ahead)" } ?? "the receiver did not answer (busy with another sender?)"
                    reporter.say("blesend: \(why); trying again in \(Formatting.seconds(pause.seconds))")
                } else if policy.excluded != excludedBefore, case .connect = next {
                    let more = policy.untried.isEmpty ? "looking briefly for another receiver" : "trying the other receiver seen nearby"
                    reporter.logger.info("\(link.device ?? "the receiver") failed the handshake (\(error.code)); \(more)")
                } else if case .connect = next {
                    reporter.logger.warning("connection ended: \(error.code); reconnecting")
                }
                continue
            }
            logLinkStatistics(session)
            await link.close()
            Interrupts.shared.remove(cleanup)
            if ending == .finished { break }
            session.linkLost()
            if session.isFinished { break }
            next = policy.linkLost(progressed: progress.acknowledged > before, now: ContinuousClock.now)
            if case .connect = next {
                reporter.clearLine()
                reporter.say("blesend: link lost, reconnecting…")
            }
        }
        let elapsed = (ContinuousClock.now - progress.begin).seconds
        reporter.event(JSONLine("done", [
            ("files", .int(Int64(progress.savedFiles))), ("failed", .int(Int64(progress.failures.count))),
            ("bytes", .of(progress.savedBytes)), ("seconds", .double((elapsed * 10).rounded() / 10)),
            ("air_bytes", .of(session.payloadBytesSent)),
        ]))
        // Several files, or compressed data: the whole run in one line, with what the air carried.
        let compressed = session.payloadBytesSent < session.fileBytesSent && session.payloadBytesSent > 0
        if progress.totalFiles > 1 || compressed {
            var line = "blesend: \(progress.savedFiles) of \(progress.totalFiles) file\(progress.totalFiles == 1 ? "" : "s") sent, "
                + "\(Formatting.bytes(progress.savedBytes)); \(Formatting.bytes(session.payloadBytesSent)) of file data on the air"
            if compressed {
                line += " (compressed \((Double(session.fileBytesSent) / Double(session.payloadBytesSent) * 100).rounded() / 100)×)"
            }
            reporter.say(line + " in \(Formatting.seconds(elapsed))")
        }
        if let first = progress.failures.first { throw first }
    }

    /// The whole set's progress when there is more than one file: files done, bytes done
    /// (`plus` of the file in progress).
    private func setProgress(_ progress: Progress, plus: UInt64) -> Reporter.SetProgress? {
        guard progress.totalFiles > 1 else { return nil }
        return Reporter.SetProgress(files: progress.savedFiles, totalFiles: progress.totalFiles,
                                    bytes: progress.savedBytes + plus, totalBytes: progress.totalBytes)
    }

    private func logLinkStatistics(_ session: SenderSession) {
        guard let stats = session.linkStatistics, let timing = session.linkTiming else { return }
        let srtt = timing.smoothedRTT.map { "\(Int(($0).seconds * 1000)) ms" } ?? "-"
        reporter.logger.debug("link: \(stats.dataFramesSent) data frames (\(stats.payloadBytesSent) bytes), \(stats.retransmissions) retransmitted (\(stats.fastRetransmissions) fast, \(stats.timeouts) timeouts), \(stats.acksReceived) acks in; srtt \(srtt), rto \(Int((timing.rto).seconds * 1000)) ms")
    }

    private func handle(_ event: SenderSession.Event, _ progress: Progress) {
        switch event {
        case .authenticated(let fingerprint):
            reporter.event(JSONLine("handshake", [("peer", .string(receiverName)), ("fingerprint", .string(fingerprint))]))
            reporter.logger.info("receiver authenticated: \(receiverName) (\(fingerprint))")
        case .awaitingApproval(let code):
            reporter.event(.firstContact(peer: receiverName, code: code))
            reporter.say("blesend: first contact: the receiver must accept your key. Code: \(code) — its user types it on the receiver")
        case .transfer(.awaitingApproval):
            break
        case .transfer(.fileStarted(let index, let name, _, let resumedAt)):
            if resumedAt > 0 {
                progress.resumed.insert(index)
                reporter.event(JSONLine("resumed", [("name", .string(name)), ("offset", .of(resumedAt))]))
                reporter.logger.info("resuming \(name) at byte \(resumedAt)")
            }
            if progress.started[index] == nil { progress.started[index] = (ContinuousClock.now, resumedAt) }
        case .transfer(.progress(let index, _, let acknowledged)):
            progress.acknowledged = acknowledged
            let item = items[index]
            let start = progress.started[index] ?? (ContinuousClock.now, 0)
            reporter.progress(name: item.displayName, done: acknowledged, total: item.source?.size, startedAt: start.at, startOffset: 0,
                              set: setProgress(progress, plus: acknowledged))
        case .transfer(.fileSaved(let index, let storedName, let size, let hash, let airBytes)):
            let item = items[index]
            if case .file(let source as LocalFileSource) = item { outgoing?.forget(source) }
            record(.saved, index: index, size: size, hash: hash, airBytes: airBytes, progress: progress)
            let start = progress.started[index]?.at ?? progress.begin
            let seconds = (ContinuousClock.now - start).seconds
            progress.savedFiles += 1
            progress.savedBytes += size
            reporter.progress(name: item.displayName, done: size, total: size, startedAt: start, startOffset: 0,
                              set: setProgress(progress, plus: 0))
            reporter.event(JSONLine("file-done", [
                ("name", .string(item.displayName)), ("stored_name", .string(storedName)), ("bytes", .of(size)),
                ("seconds", .double((seconds * 10).rounded() / 10)), ("peer", .string(receiverName)),
                ("fingerprint", .string(receiverKey.fingerprint)),
            ]))
            var line = "blesend: sent \(item.displayName)  \(Formatting.bytes(size))  in \(Formatting.seconds(seconds))"
            line += "  \(Formatting.rate(seconds > 0 ? Double(size) / seconds : 0))  to \(receiverName) [\(receiverKey.fingerprint)]"
            if let tree = item.tree {
                // A folder's files are summed up once the folder is in place.
                progress.treeFiles[tree, default: (0, 0)].files += 1
                progress.treeFiles[tree, default: (0, 0)].bytes += size
                reporter.logger.info("\(line)")
                return
            }
            if storedName != item.displayName { line += "  (saved there as \(storedName))" }
            reporter.say(line)
        case .transfer(.folderSaved(let index, let storedName)):
            guard case .commit(let tree, let name) = items[index] else { return }
            outgoing?.forgetTree(tree)
            let sum = progress.treeFiles[tree] ?? (0, 0)
            reporter.event(JSONLine("folder-done", [
                ("name", .string(name)), ("stored_name", .string(storedName)), ("files", .int(Int64(sum.files))),
                ("bytes", .of(sum.bytes)), ("peer", .string(receiverName)),
            ]))
            var line = "blesend: sent folder \(name)/  \(sum.files) file\(sum.files == 1 ? "" : "s"), \(Formatting.bytes(sum.bytes))"
            line += "  to \(receiverName) [\(receiverKey.fingerprint)]"
            if storedName != name { line += "  (saved there as \(storedName))" }
            reporter.say(line)
        case .transfer(.fileFailed(let index, let failure)):
            let error = CLIError(failure, name: items[index].displayName)
            progress.failures.append(error)
            reporter.error(error)
            record(.failed, index: index, size: items[index].source?.size ?? 0, hash: [], airBytes: nil, detail: error.message,
                   progress: progress)
        case .transfer(.finished):
            break
        }
    }

    /// Writes item `index`, saved or failed, into the history.
    private func record(_ outcome: HistoryEntry.Outcome, index: Int, size: UInt64, hash: [UInt8], airBytes: UInt64?,
                        detail: String = "", progress: Progress) {
        let item = items[index]
        let path = (item.source as? LocalFileSource)?.path ?? item.displayName
        history?.record(HistoryEntry(time: History.now, direction: .sent, outcome: outcome, resumed: progress.resumed.contains(index),
                                     size: size, airBytes: airBytes, hash: hash, peer: receiverName,
                                     fingerprint: receiverKey.fingerprint, path: path, transport: progress.transport, detail: detail))
    }
}
