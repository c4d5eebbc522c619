#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import BlueZ
import Discovery
import Keys

/// `blesend scan`
struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the blesend receivers advertising nearby, without connecting to any.",
        discussion: """
        Listens for --timeout seconds and lists every receiver it heard, strongest signal first: \
        its signal strength (RSSI, dBm), its mode, its Bluetooth address and address type \
        (public, or random: an address that LE privacy changes every few minutes), and whose it \
        is, where the advertisement says. Nothing is sent to any of them.

        pairing: started with blerecv pair, open to blesend pair. The name shown is the one \
        it advertises for itself; anyone can advertise any name, and only the pairing code \
        proves who it is.

        private: started with --private-discovery. Its advertisement lists the senders it \
        trusts, in a form only they can read. When it lists your key (your default key, or \
        --key) under the key of a receiver you pinned (a NAME.pub in \
        ~/.config/blesend/receivers/), that receiver's name and fingerprint are shown, and it \
        "lists you": a strong hint, not a proof (only the handshake of blesend send proves it).

        plain: advertises the transfer service openly (or in a form this blesend cannot read: \
        a later version). Whose it is, whether it trusts you, and whether it takes first \
        contact (blerecv --ask) cannot be known without connecting.

        A receiver that is not advertising (stopped, or out of range) is not listed; neither is one \
        weaker than --min-rssi (the same cut blesend send makes; an adapter that reports no RSSI \
        shows ?).

        Examples:
          blesend scan
          blesend scan --adapter hci1 --timeout 10 --min-rssi -90
          blesend scan --json | jq -r 'select(.mode == "pairing") | .name'

        Exit codes: 0 receivers listed, 64 usage, 65 the --key file, 67 no adapter or \
        bluetoothd, 68 no receiver found nearby (stderr says so; with --json an error event), \
        130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 the terminal went away (SIGHUP).
        """)

    @Option(help: ArgumentHelp("Bluetooth adapter to use, e.g. hci1 (default: BlueZ's first adapter).", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Seconds to listen.", valueName: "seconds"))
    var timeout: Int = 5

    @Option(name: .customLong("min-rssi"), parsing: .unconditional, help: ArgumentHelp(
        "Leave out receivers weaker than this, in dBm (as blesend send skips them). Adapters that report no RSSI are not left out.",
        valueName: "dBm"))
    var minRSSI: Int = -80

    @Option(help: ArgumentHelp(
        "Your secret key file, to recognise private-discovery receivers that list you (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id; none there: nothing is matched).",
        valueName: "path"), completion: .file())
    var key: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (-127...20).contains(minRSSI) else { throw ValidationError("--min-rssi must be between -127 and 20 dBm") }
        guard (1...3_600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds") }
    }

    func run() async throws {
        let reporter = output.reporter(tool: "blesend")
        try await runReporting(tool: "blesend", reporter: reporter) { () async throws(CLIError) in
            let reader = AdvertisementReader(identity: try Self.identity(key, reporter: reporter), receivers: Self.pinned(reporter: reporter))
            if isatty(2) == 1 { reporter.say("blesend: listening for receivers for \(timeout) s…") }
            let receivers: [NearbyReceiver]
            do throws(BlueZError) {
                receivers = try await ReceiverSurvey.take(adapter: adapter, duration: .seconds(timeout))
            } catch {
                throw CLIError(error, adapter: adapter)
            }
            let (rows, weaker) = ScanRow.rows(receivers, reader: reader, minimumRSSI: Int16(minRSSI))
            guard !rows.isEmpty else { throw Self.noneFound(weaker: weaker, minRSSI: minRSSI) }
            if output.json {
                for row in rows { reporter.event(row.json) }
            } else {
                Console.out(([ScanRow.tableHeader] + rows.map(\.tableLine)).joined(separator: "\n") + "\n")
            }
        }
    }

    static func noneFound(weaker: Int, minRSSI: Int) -> CLIError {
        let hint = weaker > 0
            ? "\(weaker) more \(weaker == 1 ? "was" : "were") weaker than \(minRSSI) dBm: move closer, or lower --min-rssi"
            : "is blerecv running nearby? Move closer, or listen longer with --timeout"
        return CLIError(.peerNotFound, "no receivers found nearby", hint: hint)
    }

    /// Our identity: the one `--key` names (it must load), else the default one if there is one
    /// (one that does not load is warned about); nil: private-discovery data is not matched.
    static func identity(_ path: String?, reporter: Reporter) throws(CLIError) -> Identity? {
        if let path { return try KeyLocation.loadIdentity(path) }
        guard access(KeyLocation.defaultPath, F_OK) == 0 else {
            reporter.logger.info("no key at \(KeyLocation.defaultPath): private-discovery receivers are not matched")
            return nil
        }
        do {
            return try KeyFile.loadIdentity(path: KeyLocation.defaultPath)
        } catch {
            reporter.warn("cannot use your key (\(error.message)): private-discovery receivers are listed without names")
            return nil
        }
    }

    /// The receivers we pinned; none (with a warning) when their directory is unusable.
    static func pinned(reporter: Reporter) -> [TrustStore.Peer] {
        do {
            return try PinnedReceivers.load()
        } catch {
            reporter.warn("cannot read your pinned receivers (\(error.message)): private-discovery receivers are listed without names")
            return []
        }
    }
}
