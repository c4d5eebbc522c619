import ArgumentParser
import Keys

/// `blerecv trust`: the senders this receiver accepts, one NAME.pub each in the trust directory.
struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the senders you trust: add (the default), list, remove, rename.",
        discussion: """
        The trust directory holds one NAME.pub per trusted sender (default: \(KeyDirectoryLocation.trustRule)). \
        A running blerecv reads it again before every handshake: a sender added, removed or \
        renamed counts from the next connection on, without a restart.

        Examples:
          blerecv trust blesend-pub1:... --name alice          # add (same as: blerecv trust add ...)
          blerecv trust add ./bob.pub --name bob-laptop
          blesend pubkey | blerecv trust add - --name me       # the key from standard input
          blerecv trust list
          blerecv trust list --json
          blerecv trust rename alice alice-old
          blerecv trust remove alice
          blerecv trust remove '0c5f 40b9 d0c9 1cf3 35cb 14c2 5c9f cc81'
          blerecv trust add ./carol.pub --name carol --trust keys/   # another trust directory
        """,
        subcommands: [TrustAdd.self, TrustList.self, TrustRemove.self, TrustRename.self],
        defaultSubcommand: TrustAdd.self)
}

/// Which trust directory: `--trust DIR` (`--dir DIR`, its old name, still works), else the default.
struct TrustDirectoryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The trust directory (default: \(KeyDirectoryLocation.trustRule)).", valueName: "dir"), completion: .directory)
    var trust: String?

    @Option(name: .customLong("dir"), help: ArgumentHelp("The old name of --trust.", visibility: .hidden))
    var dir: String?

    func validate() throws {
        if let trust, let dir, trust != dir { throw ValidationError("--dir is the old name of --trust: give one of them") }
    }

    var actions: NamedKeyActions { NamedKeyActions(directory: KeyDirectoryLocation.trust(trust ?? dir)) }
}

/// `blerecv trust [add] KEY --name NAME`
struct TrustAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Trust a sender: add its public key to the trust directory.",
        discussion: """
        Writes DIR/NAME.pub (the directory is made if missing). Adding the same key under the same \
        name again changes nothing. A name another key holds, or a key trusted under another name, \
        is refused with the command that renames or removes the holder.

        The key: the blesend-pub1: line (white space around it, or inside it where a terminal \
        broke the line, does not matter), its .pub file, or - to read it from standard input (a \
        line, or a whole .pub file).

        Examples:
          blerecv trust add blesend-pub1:... --name alice
          blerecv trust add ./bob.pub --name bob-laptop
          ssh bob@laptop blesend pubkey | blerecv trust add - --name bob-laptop
          sudo blerecv trust add alice.pub --name alice      # root: /etc/blesend/trusted
        """)

    @Argument(help: ArgumentHelp("The sender's public key (blesend-pub1:…), its .pub file, or - for standard input.", valueName: "key"), completion: .file(extensions: ["pub"]))
    var key: String

    @Option(help: "The name shown for this sender (letters, digits, - _ .).")
    var name: String

    @OptionGroup var directory: TrustDirectoryOptions

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in try directory.actions.add(key, name: name) }
    }
}

/// `blerecv trust list`
struct TrustList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the trusted senders: name, fingerprint, file.",
        discussion: """
        Examples:
          blerecv trust list
          blerecv trust list --json        # one {"event":"trusted",...} per line (docs/json-events.md)
        """)

    @Flag(help: "One JSON object per line: event \"trusted\" with name, fingerprint, key and path.")
    var json = false

    @OptionGroup var directory: TrustDirectoryOptions

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in try directory.actions.list(json: json) }
    }
}

/// `blerecv trust remove NAME|FINGERPRINT`
struct TrustRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Stop trusting a sender, by name or fingerprint.",
        discussion: """
        Removes DIR/NAME.pub. A running blerecv refuses the key from its next handshake (it reads \
        the trust directory again before each one); a transfer already under way goes on. By \
        fingerprint, every name holding that key is removed.

        Examples:
          blerecv trust remove alice
          blerecv trust remove 0c5f 40b9 d0c9 1cf3 35cb 14c2 5c9f cc81
        """)

    @Argument(help: ArgumentHelp("The sender's name, or its fingerprint (spaces optional).", valueName: "name-or-fingerprint"))
    var target: [String]

    @OptionGroup var directory: TrustDirectoryOptions

    func validate() throws {
        if target.isEmpty { throw ValidationError("say which sender: its name or fingerprint (blerecv trust list shows them)") }
    }

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in try directory.actions.remove(target) }
    }
}

/// `blerecv trust rename OLD NEW`
struct TrustRename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Give a trusted sender another name.",
        discussion: """
        The key stays trusted throughout (the new file is written before the old one goes).

        Examples:
          blerecv trust rename alice alice-old
          blerecv trust rename alice alice-phone --trust keys/
        """)

    @Argument(help: ArgumentHelp("The sender's name now (or its fingerprint, quoted).", valueName: "old"))
    var old: String

    @Argument(help: ArgumentHelp("Its new name.", valueName: "new"))
    var new: String

    @OptionGroup var directory: TrustDirectoryOptions

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in try directory.actions.rename(old, to: new) }
    }
}
