#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Durable

/// What `blesend history` and `blerecv history` share: where, how, since when.
struct HistoryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        The state folder (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/blesend or \
        ~/.local/state/blesend). Only read: a folder given here that does not exist is an error \
        (exit 64); the default one missing means no history yet.
        """,
                               valueName: "dir"))
    var state: String?

    @Option(help: ArgumentHelp("Only entries since then: 30m, 12h, 7d, a date (2026-11-27, local midnight) or seconds since 1970.",
                               valueName: "when"))
    var since: String?

    @Flag(help: "One JSON object per line: event \"history\" for each entry (docs/json-events.md).")
    var json = false

    func validate() throws {
        if let since, Self.start(since, now: History.now) == nil {
            throw ValidationError("--since takes 30m, 12h, 7d, a date like 2026-11-27, or seconds since 1970")
        }
    }

    /// The first second `since` lets in; nil when it cannot be read.
    static func start(_ since: String, now: UInt64) -> UInt64? {
        if let seconds = UInt64(since) { return seconds }
        if let unit = since.last, let count = UInt64(since.dropLast()) {
            let scale: UInt64? = switch unit {
            case "m": 60
            case "h": 3_600
            case "d": 86_400
            default: nil
            }
            if let scale {
                // (so large a count reaches back before 1970: everything)
                let (span, overflow) = count.multipliedReportingOverflow(by: scale)
                return overflow || span >= now ? 0 : now - span
            }
        }
        let parts = since.split(separator: "-", omittingEmptySubsequences: false).map { Int32($0) }
        guard parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2],
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var date = tm()
        date.tm_year = year - 1900
        date.tm_mon = month - 1
        date.tm_mday = day
        date.tm_isdst = -1
        let seconds = mktime(&date)
        return seconds >= 0 ? UInt64(seconds) : nil
    }

    /// Shows the history `name` of `folder` (`--state`, else the default); creates nothing. A
    /// `--state` that does not exist is a usage error (a typo); the default folder missing is a
    /// machine where the tool never ran: no history yet. `service`: the packaged receiver's
    /// state, mentioned when it holds entries this user does not see.
    func show(_ name: String, tool: String, service: ServiceState = .package) throws(CLIError) {
        let folder = StateLocation.folder(state)
        let shown = try Self.entries(name, in: folder, given: state != nil, exists: service.exists)
            .filter { $0.time >= (since.flatMap { Self.start($0, now: History.now) } ?? 0) }
        for entry in shown { Console.out((json ? Self.json(entry).text : Self.line(entry)) + "\n") }
        if shown.isEmpty && !json {
            Console.err(service.exists(folder)
                ? "\(tool): nothing in the history\(since.map { " since \($0)" } ?? "") (\(folder))\n"
                : "\(tool): no history yet (\(folder) does not exist: nothing was sent or received as this user)\n")
        }
        // (the service only receives: it keeps no sent history)
        if name == History.receivedName, let note = Self.serviceNote(tool: tool, own: folder, service: service) {
            Console.err(note + "\n")
        }
    }

    /// The entries of the history `name` in `folder`, read without creating the folder or the
    /// file; none when the folder is the default one and does not exist. `given`: the folder
    /// came from `--state`.
    static func entries(_ name: String, in folder: String, given: Bool,
                        exists: (String) -> Bool = ServiceState.pathExists) throws(CLIError) -> [HistoryEntry] {
        guard exists(folder) else {
            guard !given else {
                throw CLIError(.usage, "no state folder \(folder)",
                               hint: "check the path: --state takes the folder the tool keeps its state in (the service's is \(ServiceState.package.folder))")
            }
            return []
        }
        guard exists(folder + "/" + name) else { return [] }
        do {
            return try HistoryJournal(disk: try PosixDisk(folder: folder), name: name).entries()
        } catch {
            throw CLIError(.localIO, "cannot read the history in \(folder): \(error)", hint: "give the folder the tool keeps it in with --state DIR")
        }
    }

    /// "N history entries belong to the service", when `own` is not the service's folder.
    static func serviceNote(tool: String, own: String, service: ServiceState) -> String? {
        service.note(tool: tool, own: own, look: service.folder, what: ("history entry", "history entries"), count: {
            guard service.exists(service.folder + "/" + History.receivedName) else { return 0 }
            return try? entries(History.receivedName, in: service.folder, given: true, exists: service.exists).count
        }, command: "sudo -u blesend \(tool) history --state \(service.folder)")
    }

    static func json(_ entry: HistoryEntry) -> JSONLine {
        JSONLine("history", [
            ("time", .of(entry.time)), ("direction", .string(entry.direction == .sent ? "sent" : "received")),
            ("result", .string(entry.outcome == .saved ? "saved" : "failed")), ("resumed", .bool(entry.resumed)),
            ("path", .string(entry.path)), ("bytes", .of(entry.size)), ("air_bytes", .of(entry.airBytes)),
            ("blake2b", entry.hash.isEmpty ? .null : .string(hex(entry.hash))), ("peer", .string(entry.peer)),
            ("fingerprint", .string(entry.fingerprint)), ("transport", entry.transport.isEmpty ? .null : .string(entry.transport)),
            ("detail", entry.detail.isEmpty ? .null : .string(entry.detail)),
        ])
    }

    /// `2026-11-27 21:30:05  sent  report.pdf  1.2 MB  to alice [fingerprint]  l2cap, resumed`.
    static func line(_ entry: HistoryEntry) -> String {
        var line = "\(localTime(entry.time))  \(entry.direction == .sent ? "sent" : "received")"
        if entry.outcome == .failed { line += " (failed)" }
        line += "  \(TerminalText.sanitized(entry.path))  \(Formatting.bytes(entry.size))"
        line += "  \(entry.direction == .sent ? "to" : "from") \(TerminalText.sanitized(entry.peer)) [\(entry.fingerprint)]"
        let notes = [entry.transport, entry.resumed ? "resumed" : "",
                     entry.airBytes.map { "\(Formatting.bytes($0)) on the air" } ?? ""].filter { !$0.isEmpty }
        if !notes.isEmpty { line += "  " + notes.joined(separator: ", ") }
        if entry.outcome == .failed { line += ": \(TerminalText.sanitized(entry.detail))" }
        return line
    }

    static func localTime(_ seconds: UInt64) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        localtime_r(&clock, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}

/// `blesend history`
struct SentHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "What this user sent: time, file, size, receiver, transport, result.",
        discussion: """
        blesend keeps the last MiB or so of it (about 5,000 files) in its state folder, each \
        entry synced as the receiver confirms the file (or as it fails).

        Examples:
          blesend history
          blesend history --since 7d --json
        """)

    @OptionGroup var options: HistoryOptions

    func run() async throws {
        try await runReporting(tool: "blesend") { () async throws(CLIError) in try options.show(History.sentName, tool: "blesend") }
    }
}

/// `blerecv history`
struct ReceivedHistory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "What this receiver received: time, stored path, size, BLAKE2b, sender, transport, result.",
        discussion: """
        blerecv keeps the last MiB or so of it (about 5,000 files) in its state folder (--state; \
        under the unit /var/lib/blesend), each entry synced as the file is stored (or fails).

        Examples:
          blerecv history
          sudo -u blesend blerecv history --state /var/lib/blesend --since 2026-11-01
        """)

    @OptionGroup var options: HistoryOptions

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in try options.show(History.receivedName, tool: "blerecv") }
    }
}
