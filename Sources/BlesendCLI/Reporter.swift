#if canImport(Glibc)
import Glibc
#endif
import Logging
import Pipeline

/// Everything the tools tell the user, in one place.
///
/// - On a terminal (and without `--quiet`): a progress line on stderr that redraws in place, and
///   a summary line per file.
/// - Not on a terminal: the summary lines, and a plain progress line every 10 % or 30 s
///   (`ProgressThrottle`), no control codes. `--quiet`: errors only.
/// - `--json`: newline-delimited JSON events on stdout (docs/json-events.md); stderr keeps errors.
/// - `--progress always` shows the progress (bar or lines) under `--quiet` and `--json` too;
///   `--progress never` shows none.
final class Reporter: @unchecked Sendable {
    struct Options {
        var json = false
        var quiet = false
        var tool = "blesend"
        var progress = ProgressMode.auto
    }

    let options: Options
    let logger: Logger
    /// The progress bar that redraws in place (a terminal).
    private let drawsBar: Bool
    /// Plain progress lines, one every 10 % or 30 s (not a terminal).
    private let printsLines: Bool
    /// Where each file's plain lines stand, by sender and name.
    private var throttles: [String: ProgressThrottle] = [:]
    private let clock: () -> ContinuousClock.Instant
    private var lineShown = false
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastJSONProgress = ContinuousClock.now - .seconds(1)
    /// What carries the current connection (shown on the progress line and in progress events).
    var transport: TransportDescription?

    /// Where lines for people go (standard error; a test may catch them).
    private let writeError: (String) -> Void

    /// `terminal`: whether standard error is one; `clock`: the time (tests step it).
    init(options: Options, logger: Logger, writeError: @escaping (String) -> Void = Console.err,
         terminal: Bool = isatty(2) == 1, clock: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.options = options
        self.logger = logger
        self.writeError = writeError
        self.clock = clock
        let shown = switch options.progress {
        case .auto: !options.quiet && !options.json
        case .always: true
        case .never: false
        }
        self.drawsBar = shown && terminal
        self.printsLines = shown && !terminal
    }

    // MARK: Events

    func event(_ line: JSONLine) {
        guard options.json else { return }
        Console.out(line.text + "\n")
    }

    /// A line for people: on stderr, unless quiet or in JSON mode. Control characters (from a
    /// peer's names) are shown as escapes, never sent to the terminal.
    /// Something the user should know that does not stop the run (a skipped entry of a folder):
    /// `tool: warning: …`, or a `warning` event with `--json`.
    func warn(_ text: String) {
        event(JSONLine("warning", [("message", .string(text))]))
        guard !options.quiet, !options.json else { return }
        clearLine()
        writeError("\(options.tool): warning: \(TerminalText.sanitized(text))\n")
    }

    func say(_ text: String) {
        guard !options.quiet, !options.json else { return }
        clearLine()
        writeError(TerminalText.sanitized(text) + "\n")
    }

    /// A line the user cannot do without (a pairing code to type): said under `--quiet` too;
    /// with `--json` the event carries it instead.
    func sayAlways(_ text: String) {
        guard !options.json else { return }
        clearLine()
        writeError(TerminalText.sanitized(text) + "\n")
    }

    /// Where a set of several files stands: files finished, bytes confirmed of all of them.
    struct SetProgress {
        var files: Int
        var totalFiles: Int
        var bytes: UInt64
        var totalBytes: UInt64
    }

    /// Progress of one file (and of the whole set, when given; `peer`: the sender, on blerecv);
    /// redraws at most 10 times a second, JSON at most twice a second, plain lines every 10 % or 30 s.
    func progress(name: String, peer: String? = nil, done: UInt64, total: UInt64?, startedAt: ContinuousClock.Instant,
                  startOffset: UInt64, set: SetProgress? = nil) {
        let now = clock()
        let elapsed = (now - startedAt).seconds
        let rate = elapsed > 0 ? Double(done - min(done, startOffset)) / elapsed : 0
        if options.json, now - lastJSONProgress >= .milliseconds(500) {
            lastJSONProgress = now
            event(JSONLine("progress", [
                ("name", .string(name)), ("bytes", .of(done)), ("total", .of(total)),
                ("rate", .double((rate * 10).rounded() / 10)), ("mtu", transport?.attMTU.map { .int(Int64($0)) } ?? .null),
                ("transport", transport.map { .string($0.kind.rawValue) } ?? .null),
            ] + (set.map { [("files_done", .int(Int64($0.files))), ("files_total", .int(Int64($0.totalFiles))),
                            ("set_bytes", .of($0.bytes)), ("set_total", .of($0.totalBytes))] } ?? [])))
        }
        if printsLines { plainLine(name: name, peer: peer, done: done, total: total, rate: rate, set: set, now: now) }
        guard drawsBar, now - lastDraw >= .milliseconds(100) || total == done else { return }
        lastDraw = now
        var line = ""
        if let set {
            line += "  \(set.files)/\(set.totalFiles) files, \(Formatting.bytes(set.bytes))/\(Formatting.bytes(set.totalBytes))"
        }
        line += "  \(Self.clip(TerminalText.sanitized(name), 24))  \(Formatting.bytes(done))"
        if let total, total > 0 {
            let fraction = Double(done) / Double(total)
            let eta = rate > 0 ? Double(total - min(total, done)) / rate : .infinity
            line += " / \(Formatting.bytes(total))  \(Formatting.bar(fraction: fraction))  \(Int(fraction * 100))%"
            line += "  \(Formatting.rate(rate))  ETA \(Formatting.duration(eta))"
        } else {
            line += "  \(Formatting.rate(rate))"
        }
        if let transport { line += "  (\(transport.shortLabel))" }
        writeError("\r\u{1B}[2K" + line)
        lineShown = true
    }

    /// `blesend: report.pdf 30 % (384.0 KiB of 1.2 MiB) 41.0 kB/s ETA 0:21`, when its throttle says so.
    private func plainLine(name: String, peer: String?, done: UInt64, total: UInt64?, rate: Double, set: SetProgress?,
                           now: ContinuousClock.Instant) {
        let key = (peer ?? "") + "\u{0}" + name
        if throttles[key] == nil, throttles.count >= 32 {
            throttles = throttles.filter { !$0.value.finished }
            if throttles.count >= 32 { throttles = [:] }
        }
        guard throttles[key, default: ProgressThrottle()].shouldPrint(done: done, total: total, now: now) else { return }
        var line = "\(options.tool): \(TerminalText.sanitized(name))"
        if let peer { line += " from \(TerminalText.sanitized(peer))" }
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let eta = rate > 0 ? Double(total - min(total, done)) / rate : .infinity
            line += " \(Int(fraction * 100)) % (\(Formatting.bytes(done)) of \(Formatting.bytes(total))) \(Formatting.rate(rate))"
            line += done >= total ? "" : " ETA \(Formatting.duration(eta))"
        } else {
            line += " \(Formatting.bytes(done)) \(Formatting.rate(rate))"
        }
        if let set, set.totalFiles > 1 { line += ", \(set.files) of \(set.totalFiles) files done" }
        if let transport { line += " (\(transport.shortLabel))" }
        writeError(line + "\n")
    }

    /// A connection is up: the `connected` event (device, transport, payload size, ATT MTU, PHY) and
    /// the log line; later progress lines name the transport.
    /// `l2capFallback`: why the L2CAP channel did not open, when GATT carries the link instead.
    func connected(device: String?, transport: TransportDescription, l2capFallback: String? = nil) {
        self.transport = transport
        var fields: [(String, JSONLine.Value)] = [
            ("device", .of(device)), ("transport", .string(transport.kind.rawValue)),
            ("payload", .int(Int64(transport.sendSize))), ("mtu", transport.attMTU.map { .int(Int64($0)) } ?? .null),
            ("phy", .of(transport.phy)),
        ]
        if let l2capFallback { fields.append(("l2cap_fallback", .string(l2capFallback))) }
        event(JSONLine("connected", fields))
        let note = l2capFallback.map { " (its L2CAP channel did not open: \($0); using GATT)" } ?? ""
        logger.info("connected to \(device ?? "a peer") over \(transport)\(note)")
    }

    /// Prints an error as `tool: error: …` and `tool: hint: …`, and as a JSON event.
    func error(_ error: CLIError) {
        clearLine()
        event(JSONLine.error(error.status, message: error.message, hint: error.hint))
        writeError("\(options.tool): error: \(TerminalText.sanitized(error.message))\n")
        if let hint = error.hint { writeError("\(options.tool): hint: \(TerminalText.sanitized(hint))\n") }
    }

    func clearLine() {
        if lineShown {
            writeError("\r\u{1B}[2K")
            lineShown = false
        }
    }

    static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text.padding(width) : String(text.prefix(width - 1)) + "…"
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
