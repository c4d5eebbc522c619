import ArgumentParser
import Logging

/// Options every transfer command shares: how it talks to people and scripts.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Write newline-delimited JSON events to standard output (see docs/json-events.md).")
    var json = false

    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: [.short, .long], help: "More detail on standard error; repeat for more (-vv, -vvv). Never shows secrets.")
    var verbose: Int

    /// `progress`: `--progress` where the command has it (send, receive).
    func reporter(tool: String, progress: ProgressMode = .auto) -> Reporter {
        let level: Logger.Level = switch verbose {
        case 0: .warning
        case 1: .info
        case 2: .debug
        default: .trace
        }
        var logger = Logger(label: tool) { label in StandardErrorLogHandler(label: label) }
        logger.logLevel = quiet ? .error : level
        if json { Interrupts.shared.writeJSON() }
        return Reporter(options: .init(json: json, quiet: quiet, tool: tool, progress: progress), logger: logger)
    }
}

/// swift-log handler writing `tool: level: message` lines to standard error.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        Console.err("\(label): \(event.level): \(TerminalText.sanitized(event.message.description))\n")
    }
}
