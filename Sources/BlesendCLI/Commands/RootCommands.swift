import ArgumentParser

/// `blesend`: the sender, plus key management.
public struct BlesendCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "blesend",
        abstract: "Send files over Bluetooth LE, encrypted and authenticated end to end.",
        discussion: """
        Start here:
          blesend keygen                                          # once: make your key pair
          blesend pubkey                                          # show your key, to give to a receiver
          blesend receivers add <receiver key or .pub> --name pi  # pin the receiver's key once
          blesend --to pi FILE                                    # send (or --to <key or .pub>)
          blesend receivers list                                  # the receivers you pinned
          blesend doctor                                          # is Bluetooth set up right?
        """,
        version: BlesendVersion.line(tool: "blesend"),
        subcommands: [Send.self, Keygen.self, Pubkey.self, Receivers.self, SentHistory.self, SenderDoctor.self],
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
          blesend keygen                                     # once: make this machine's key pair
          blesend pubkey                                     # the key senders pin (blesend receivers add)
          blerecv trust add <sender key or .pub> --name alice   # trust a sender
          blerecv --out ~/Downloads                          # receive (or --ask: asks about new senders)
          blerecv trust list                                 # who is trusted; remove, rename
          blerecv doctor                                     # is Bluetooth set up right?

        The trust directory: \(KeyDirectoryLocation.trustRule) (--trust DIR for another).
        """,
        version: BlesendVersion.line(tool: "blerecv"),
        subcommands: [Receive.self, Trust.self, Partials.self, ReceivedHistory.self, ReceiverDoctor.self],
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
