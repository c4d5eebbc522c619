import ArgumentParser
import Keys

/// `blesend receivers`: the sender's address book, one NAME.pub per receiver, so that
/// `blesend --to NAME` finds the key.
struct Receivers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Your address book of receivers: list (the default), add, remove, rename.",
        discussion: """
        Each receiver is a NAME.pub in \(KeyDirectoryLocation.receiversRule). `blesend --to NAME` \
        sends to the receiver of that name (a key text or a .pub path given to --to works as \
        before).

        Examples:
          blesend receivers add blesend-pub1:... --name office-pi
          blesend receivers add ./laptop.pub --name laptop
          ssh pi@office blesend pubkey --key /var/lib/blesend/id | blesend receivers add - --name office-pi
          blesend receivers list
          blesend --to office-pi report.pdf
          blesend receivers rename laptop old-laptop
          blesend receivers remove old-laptop
        """,
        subcommands: [ReceiversList.self, ReceiversAdd.self, ReceiversRemove.self, ReceiversRename.self],
        defaultSubcommand: ReceiversList.self)
}

private var book: NamedKeyActions { NamedKeyActions(directory: KeyDirectoryLocation.receivers()) }

/// `blesend receivers add KEY --name NAME`
struct ReceiversAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Pin a receiver's public key under a name.",
        discussion: """
        Writes NAME.pub in the address book (made, mode 0700, if missing). Adding the same key \
        under the same name again changes nothing. A name another key holds, or a key already \
        there under another name, is refused with the command that renames or removes the holder.

        The key: the blesend-pub1: line (white space around or inside it does not matter), its \
        .pub file, or - to read it from standard input. Compare its fingerprint with the one the \
        receiver shows (blesend pubkey there) before sending to it.

        Examples:
          blesend receivers add blesend-pub1:... --name office-pi
          blesend receivers add ./receiver.pub --name laptop
          cat receiver.pub | blesend receivers add - --name laptop
        """)

    @Argument(help: ArgumentHelp("The receiver's public key (blesend-pub1:…), its .pub file, or - for standard input.", valueName: "key"), completion: .file(extensions: ["pub"]))
    var key: String

    @Option(help: "The name to send to it by (letters, digits, - _ .).")
    var name: String

    func run() async throws {
        try await runReporting(tool: "blesend") { () async throws(CLIError) in try book.add(key, name: name) }
    }
}

/// `blesend receivers list`
struct ReceiversList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the receivers in your address book: name, fingerprint, file.",
        discussion: """
        Examples:
          blesend receivers list
          blesend receivers list --json     # one {"event":"receiver",...} per line (docs/json-events.md)
        """)

    @Flag(help: "One JSON object per line: event \"receiver\" with name, fingerprint, key and path.")
    var json = false

    func run() async throws {
        try await runReporting(tool: "blesend") { () async throws(CLIError) in try book.list(json: json) }
    }
}

/// `blesend receivers remove NAME|FINGERPRINT`
struct ReceiversRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a receiver from your address book, by name or fingerprint.",
        discussion: """
        Examples:
          blesend receivers remove laptop
          blesend receivers remove 0c5f 40b9 d0c9 1cf3 35cb 14c2 5c9f cc81
        """)

    @Argument(help: ArgumentHelp("The receiver's name, or its fingerprint (spaces optional).", valueName: "name-or-fingerprint"))
    var target: [String]

    func validate() throws {
        if target.isEmpty { throw ValidationError("say which receiver: its name or fingerprint (blesend receivers list shows them)") }
    }

    func run() async throws {
        try await runReporting(tool: "blesend") { () async throws(CLIError) in try book.remove(target) }
    }
}

/// `blesend receivers rename OLD NEW`
struct ReceiversRename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Give a receiver in your address book another name.",
        discussion: """
        Examples:
          blesend receivers rename laptop old-laptop
        """)

    @Argument(help: ArgumentHelp("The receiver's name now.", valueName: "old"))
    var old: String

    @Argument(help: ArgumentHelp("Its new name.", valueName: "new"))
    var new: String

    func run() async throws {
        try await runReporting(tool: "blesend") { () async throws(CLIError) in try book.rename(old, to: new) }
    }
}
