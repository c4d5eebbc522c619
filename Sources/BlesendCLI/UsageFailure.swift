import ArgumentParser

/// A command line the tool refuses (the parser's errors, `validate()`'s, an unknown command): the
/// one place where what is printed and the exit status are decided, so that every usage error
/// reads `tool: error: …` / `tool: hint: …` and exits 64, whoever found it.
public struct UsageFailure: Equatable, Sendable {
    public var tool: String
    public var message: String
    public var hint: String?
    public var status: Int32

    /// Nil for what is not a failure to report here: `--help`, `--version`, completion scripts
    /// (printed and exit 0 as ArgumentParser does), and the exit code of a run that already said
    /// what went wrong (`runReporting`).
    public init?<Root: ParsableCommand>(_ error: any Error, root: Root.Type) {
        let code = Root.exitCode(for: error)
        if code == .success || error is ExitCode { return nil }
        tool = Root.configuration.commandName ?? Root._commandName
        message = Root.message(for: error)
        hint = Self.helpHint(Root.fullMessage(for: error))
        status = code.rawValue
    }

    public init(tool: String, message: String, hint: String?, status: Int32 = ExitStatus.usage.rawValue) {
        self.tool = tool
        self.message = message
        self.hint = hint
        self.status = status
    }

    /// What goes to standard error.
    public var text: String {
        "\(tool): error: \(message)\n" + (hint.map { "\(tool): hint: \($0)\n" } ?? "")
    }

    /// ArgumentParser's "  See 'blesend send --help' for more information." becomes the hint.
    static func helpHint(_ fullMessage: String) -> String? {
        guard let line = fullMessage.split(separator: "\n").last(where: { $0.contains("See '") }),
              let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end
        else { return nil }
        return "see \(line[start...end]) for the options and examples"
    }
}
