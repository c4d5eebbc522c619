import ArgumentParser

/// With `--json`, a usage error (the parser's, or a `validate()`'s: exit 64) also writes an `error`
/// event on stdout, code `usage`, so that a script reading the events learns why there are none.
/// Parsing failed, so no OutputOptions says whether `--json` was given: the raw arguments do.
enum UsageErrorEvent {
    /// Whether `--json` is among the arguments (not after a `--`, where it would be a file name).
    static func wantsJSON(_ arguments: some Sequence<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--json" { return true }
        }
        return false
    }

    /// The event for `error`, thrown out of parsing or running `root`, when it is a usage error and
    /// the arguments ask for JSON. An `ExitCode` is left alone: the command reported it already.
    static func line(for error: any Error, root: any ParsableCommand.Type, arguments: some Sequence<String>) -> JSONLine? {
        guard !(error is ExitCode), wantsJSON(arguments), root.exitCode(for: error) == .validationFailure else { return nil }
        return JSONLine.error(.usage, message: root.message(for: error), hint: nil)
    }

    static func write(for error: any Error, root: any ParsableCommand.Type) {
        if let line = line(for: error, root: root, arguments: CommandLine.arguments.dropFirst()) { Console.out(line.text + "\n") }
    }
}
