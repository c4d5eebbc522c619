#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser

/// `blesend`: the sender, plus key management.
public struct BlesendCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blesend",
        abstract: "Send files over Bluetooth LE, encrypted and authenticated end to end.",
        discussion: """
        Start here:
          blesend pair                                            # once per receiver: type the code blerecv pair shows
          blesend --to pi FILE                                    # send to a receiver you paired with (or --to <key or .pub>)
          blesend scan                                            # which receivers are near?
          blesend receivers list                                  # the receivers you pinned; add, remove, rename
          blesend doctor                                          # is Bluetooth set up right?
          blesend pubkey                                          # your key, for a receiver that pins it by hand
        """,
        version: BlesendVersion.line(tool: "blesend"),
        subcommands: [Send.self, SenderPair.self, Scan.self, Keygen<SenderTool>.self, Pubkey<SenderTool>.self, Receivers.self, SentHistory.self, SenderDoctor.self],
        defaultSubcommand: Send.self)

    public init() {}
}

/// `blerecv`: the receiver, plus trust management.
public struct BlerecvCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blerecv",
        abstract: "Receive files over Bluetooth LE from senders you trust.",
        discussion: """
        Start here:
          blerecv pair                                       # once per sender: show a code for blesend pair
          blerecv --out ~/Downloads                          # receive (or --ask: asks about new senders)
          blerecv trust add <sender key or .pub> --name alice   # or trust a sender's key by hand
          blerecv status                                     # what the running receiver is doing
          blerecv trust list                                 # who is trusted; remove, rename
          blerecv doctor                                     # is Bluetooth set up right?
          blerecv pubkey                                     # your key, for a sender that pins it by hand (keygen makes one)

        The trust directory: \(KeyDirectoryLocation.trustRule) (--trust DIR for another).
        """,
        version: BlesendVersion.line(tool: "blerecv"),
        subcommands: [Receive.self, ReceiverPair.self, ReceiverStatusCommand.self, Trust.self, Partials.self, ReceivedHistory.self, ReceiverDoctor.self,
                      Keygen<ReceiverTool>.self, Pubkey<ReceiverTool>.self],
        defaultSubcommand: Receive.self)

    public init() {}
}

extension AsyncParsableCommand {
    /// Parses the process arguments and runs the chosen (async) subcommand, exiting with its status.
    public static func runAsync() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let script = DefaultCommandCompletion.script(arguments, root: self) {
            Console.out(script + "\n")   // as ArgumentParser prints it
            return
        }
        do {
            try refuseUnknownCommand(arguments)
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            UsageErrorEvent.write(for: error, root: Self.self)   // with --json, also an `error` event on stdout
            // --help, --version, completion scripts, and the status of a run that reported itself.
            guard let failure = UsageFailure(error, root: self) else { exit(withError: error) }
            Console.err(failure.text)
            Glibc.exit(failure.status)
        }
    }

    /// `blesend histroy`: a mistyped command is refused, not sent as a file (CommandSuggestion).
    static func refuseUnknownCommand(_ arguments: [String]) throws {
        guard let word = arguments.first else { return }
        let commands = configuration.subcommands.flatMap { [$0.configuration.commandName ?? $0._commandName] + $0.configuration.aliases }
        if let suggestion = CommandSuggestion.suggestion(for: word, commands: commands, fileExists: { access($0, F_OK) == 0 }) {
            throw ValidationError(CommandSuggestion.message(word: word, suggestion: suggestion))
        }
    }
}
