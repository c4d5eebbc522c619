#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import BlueZ
import Durable
import Keys
import Pairing

/// `blesend pair`: the sender's half of pairing by a short code.
struct SenderPair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a receiver by the code it shows: no key to carry between the machines.",
        discussion: """
        Run `blerecv pair` on the receiving machine first: it shows an 8-digit code. Then run \
        blesend pair here and type that code. blesend finds the receiver that is pairing nearby, \
        and the two machines prove to each other that they know the code (a PAKE, CPace: \
        docs/protocol.md §9) before either keeps the other's key. A device in the middle that \
        does not know the code gets nothing kept on either side, and both users see the attempt fail.

        After it, the receiver trusts your key, and this machine keeps the receiver's key in its \
        address book ($XDG_CONFIG_HOME/blesend/receivers/NAME.pub): send with `blesend --to NAME FILE`.

        Makes this machine's key pair first if it has none (as `blesend keygen` would).

        Examples:
          blesend pair                       # type the code when asked
          blesend pair --name office-pc      # keep the receiver under this name
          blesend pair --code 12345678       # the code given on the command line

        Exit codes: 0 paired, 64 usage, 65 key file, 66 that receiver is not pairing, 67 no adapter \
        or bluetoothd, 68 no receiver pairing nearby, 69 link lost, 71 local I/O, 75 the receiver \
        is pairing with another sender, 79 wrong code or pairing not finished (nothing pinned), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 the terminal went away (SIGHUP).
        """)

    @Option(help: ArgumentHelp("The code blerecv pair shows (asked for when not given).", valueName: "digits"))
    var code: String?

    @Option(help: ArgumentHelp("The name to keep the receiver under (default: the name it suggests).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Your secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id; made if missing).", valueName: "path"), completion: .file())
    var key: String?

    @Option(help: ArgumentHelp("Bluetooth adapter to use, e.g. hci1 (default: BlueZ's first adapter).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Seconds to look for a receiver that is pairing.", valueName: "seconds"))
    var timeout: Int = 30

    @Option(name: .customLong("min-rssi"), parsing: .unconditional, help: ArgumentHelp(
        "Skip receivers weaker than this, in dBm (pair close together). Adapters that report no RSSI are not skipped.", valueName: "dBm"))
    var minRSSI: Int = -80

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let code, PairingPasscode(typed: code) == nil { throw ValidationError("--code takes the 8 digits blerecv pair shows, e.g. 1234 5678") }
        if let name, !PairingName.isValid(name) { throw ValidationError("--name takes letters, digits, - _ and . (at most 32)") }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second") }
        guard (-127...20).contains(minRSSI) else { throw ValidationError("--min-rssi must be between -127 and 20 dBm") }
    }

    func run() async throws {
        let reporter = output.reporter(tool: "blesend")
        Interrupts.shared.install()
        Interrupts.shared.sayOnInterrupt("not paired, nothing pinned here")
        try await runReporting(tool: "blesend", reporter: reporter) { () async throws(CLIError) in
            let identity = try KeyLocation.loadOrMakeIdentity(key, tool: "blesend")
            let book = KeyDirectoryLocation.receivers()
            if let name {
                do { try PinnedKeys.checkFree(name, in: book) } catch { throw CLIError(error) }
            }
            let typed: PairingPasscode
            if let code, let given = PairingPasscode(typed: code) {
                typed = given
            } else {
                typed = try await PairingCodePrompt.ask()
            }
            let radio = RadioOptions(adapter: adapter, transport: .gatt, minimumRSSI: Int16(minRSSI), scanTimeout: .seconds(timeout))
            let operation = PairSenderOperation(
                identity: identity, code: typed, ownName: PairingNames.thisMachine, peerName: name,
                addressBook: book, radio: radio,
                connector: BlueZConnector(radio: radio, recognises: PairSenderOperation.recognisesPairing, onlyListed: true),
                failures: Self.failures(reporter: reporter), reporter: reporter)
            try await operation.run()
        }
    }
}

extension SenderPair {
    /// The failed attempts kept in the state folder; nil (said) when they cannot be kept there.
    static func failures(reporter: Reporter) -> PairingFailures? {
        let folder = StateLocation.folder(nil)
        do {
            return try PairingFailures(disk: try PosixDisk(folder: folder))
        } catch {
            reporter.warn("cannot keep failed pairing attempts in \(folder) (\(error.detail)): the pause between attempts lasts only this run")
            return nil
        }
    }
}

/// `blerecv pair`: the receiver's half of pairing by a short code.
struct ReceiverPair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a sender by a code shown here: no key to carry between the machines.",
        discussion: """
        Shows an 8-digit code and waits for a sender. On the sending machine run `blesend pair` \
        and type the code. The two machines prove to each other that they know the code (a PAKE, \
        CPace: docs/protocol.md §9) before either keeps the other's key; then the sender's key is \
        trusted here (written into the trust directory), and blerecv exits.

        A code serves one attempt. After a failed one (a wrong code, or a device in the middle \
        guessing) nothing is trusted, and a new code is shown after a pause (5 s, doubling up to \
        5 minutes). A second sender that comes while one pairs is told the receiver is busy. \
        While pairing, this receiver takes no files: stop a running blerecv on the same adapter first.

        Makes this machine's key pair first if it has none (as `blesend keygen` would).

        Examples:
          blerecv pair                       # trust the sender under the name it suggests
          blerecv pair --name alice-laptop   # ... under this name
          blerecv pair --trust /etc/blesend/trusted

        Exit codes: 0 paired, 64 usage, 65 key file or trust directory, 67 no adapter or \
        bluetoothd, 71 local I/O, 79 no sender paired before --timeout (nothing trusted), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 the terminal went away (SIGHUP).
        """)

    @Option(help: ArgumentHelp("The name to trust the sender under (default: the name it suggests).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Directory of trusted senders' keys (default: \(KeyDirectoryLocation.trustRule); made if missing).", valueName: "dir"), completion: .directory)
    var trust: String?

    @Option(help: ArgumentHelp("Your secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id; made if missing).", valueName: "path"), completion: .file())
    var key: String?

    @Option(help: ArgumentHelp("Bluetooth adapter to use, e.g. hci0 (default: BlueZ's first adapter).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Seconds to wait for a sender to pair (the codes' lifetime).", valueName: "seconds"))
    var timeout: Int = 300

    @Flag(name: .customLong("one-link"), help: ArgumentHelp(
        "Stay unconnectable while a sender is connected (a controller that cannot hold two LE links): a second sender then finds no receiver instead of being told busy."))
    var oneLink = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let name, !PairingName.isValid(name) { throw ValidationError("--name takes letters, digits, - _ and . (at most 32)") }
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout takes 1 to 3600 seconds") }
    }

    func run() async throws {
        let reporter = output.reporter(tool: "blerecv")
        Interrupts.shared.install()
        Interrupts.shared.sayOnInterrupt("pairing stopped, nothing trusted")
        try await runReporting(tool: "blerecv", reporter: reporter) { () async throws(CLIError) in
            let identity = try KeyLocation.loadOrMakeIdentity(key, tool: "blerecv")
            let directory = KeyDirectoryLocation.trust(trust)
            do {
                try directory.createIfMissing(mode: 0o700)
                _ = try directory.entries()
                if let name { try PinnedKeys.checkFree(name, in: directory) }
            } catch {
                throw CLIError(error)
            }
            let operation = PairReceiverOperation(
                identity: identity, ownName: PairingNames.thisMachine, peerName: name, trust: directory,
                adapter: adapter, lifetime: .seconds(timeout), oneLink: oneLink, reporter: reporter)
            try await operation.run()
        }
    }
}

/// What a machine suggests calling it when it pairs: its host name, cut to a peer name.
enum PairingNames {
    static var thisMachine: String { PinnedKeys.usableName(DoctorFacts.hostname() ?? "peer") }
}

/// Asks for the code blerecv pair shows, on the terminal (or standard input), up to three times.
enum PairingCodePrompt {
    static func ask() async throws(CLIError) -> PairingPasscode {
        var input = TerminalLineReader(deadline: ContinuousClock.now + .seconds(300))
        for _ in 0..<3 {
            Console.err("Code shown by blerecv pair on the receiving machine: ")
            guard let line = await input.nextLine() else { break }
            if let code = PairingPasscode(typed: line) { return code }
            Console.err("blesend: that is not an 8-digit code (e.g. 1234 5678)\n")
        }
        throw CLIError(.usage, "no pairing code was typed", hint: "type the code blerecv pair shows, or give it with --code")
    }
}
