import ArgumentParser

/// `blesend`: the sender, plus key management.
public struct BlesendCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blesend",
        abstract: "Send files over Bluetooth LE, encrypted and authenticated end to end.",
        discussion: """
        Start here:
          blesend keygen                              # once: make your key pair
          blesend pubkey                              # show your key, to give to a receiver
          blesend --to <receiver key or .pub> FILE    # send
          blesend doctor                              # is Bluetooth set up right?
          blesend scan                                # which receivers are near?
        """,
        version: BlesendVersion.line(tool: "blesend"),
        subcommands: [Send.self, SenderPair.self, Scan.self, Keygen.self, Pubkey.self, SentHistory.self, SenderDoctor.self],
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
          blesend keygen                                   # once: make this machine's key pair
          blerecv trust <sender key or .pub> --name alice --dir keys
          blerecv --trust keys --out ~/Downloads
          blerecv doctor                                   # is Bluetooth set up right?
        """,
        version: BlesendVersion.line(tool: "blerecv"),
        subcommands: [Receive.self, ReceiverPair.self, Trust.self, Partials.self, ReceivedHistory.self, ReceiverDoctor.self],
        defaultSubcommand: Receive.self)

    public init() {}
}

extension AsyncParsableCommand {
    /// Parses the process arguments and runs the chosen (async) subcommand, exiting with its status.
    public static func runAsync() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
