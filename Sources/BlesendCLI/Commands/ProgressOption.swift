import ArgumentParser

/// `--progress auto|always|never`: how `blesend` and `blerecv` show a transfer's progress.
enum ProgressMode: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// On a terminal: the bar that redraws in place. Elsewhere (a pipe, `nohup`, the journal):
    /// a plain line every 10 % or 30 s. Neither under `--quiet` or `--json`.
    case auto
    /// As `auto`, and also under `--quiet` and `--json` (on standard error, never on stdout).
    case always
    /// No progress on standard error (`--json` keeps its `progress` events).
    case never
}

/// The `--progress` option (send and receive; pairing and scans have no progress to show).
struct ProgressOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        """
        auto: a bar on a terminal, else one plain line on standard error every 10 % or 30 s \
        (for pipes, nohup and the journal), neither with --quiet or --json. always: the same, \
        even with --quiet or --json. never: none (--json keeps its progress events).
        """, valueName: "auto|always|never"))
    var progress: ProgressMode = .auto
}
