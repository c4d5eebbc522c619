import ArgumentParser

/// What `blesend doctor` and `blerecv doctor` share: the options, and looking, judging and printing.
struct DoctorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The adapter to check, e.g. hci1 (default: BlueZ's first adapter, the one the transfers use).",
                               valueName: "hciN"))
    var adapter: String?

    @Flag(help: "Print the report as one JSON `doctor` event on standard output (see docs/json-events.md).")
    var json = false

    func run(role: DoctorRole, tool: String) async throws {
        let facts = await DoctorFacts.gather(.system)
        let report = DoctorJudge.report(facts, role: role, adapter: adapter)
        Console.out(json ? report.json + "\n" : report.text(tool: tool))
        guard report.ok else { throw ExitCode(report.exitStatus.rawValue) }
    }

    /// The help's list of checks and exits, for either role.
    static func discussion(tool: String, role: DoctorRole) -> String {
        let nameCheck = role == .sender
            ? "  device name      the adapter's name (Adapter1.Alias) names neither this machine nor you\n"
            : ""
        let receiverChecks = role == .receiver
            ? """
                peripheral role  the adapter can advertise (Adapter1.Roles has "peripheral")
                advertising      LEAdvertisingManager1.SupportedInstances above 0
                device name      the adapter's name (Adapter1.Alias) names neither this machine nor you
                address privacy  the kernel's LE privacy setting: with it off, the fixed address is on the
                                 air and --private-discovery refuses to start (exit 78)\n
              """
            : ""
        let job = role == .sender ? "send" : "receive"
        return """
            Checks what \(tool) needs to \(job) on this machine, in this order, one line each: ✓ fine, \
            ✗ in the way (the one command or setting that fixes it is under it), ! worth knowing. \
            Checks that need a failed one are listed as not checked. It only looks; nothing is changed.

              system bus       the bus answers (DBUS_SYSTEM_BUS_ADDRESS, or the default)
              bluetoothd       runs (owns org.bluez); its version: bluetoothd --version
              permission       bluetoothd answers this user (a GetManagedObjects call)
              adapter          the one --adapter names, or the first
              rfkill           /sys/class/rfkill blocks no Bluetooth radio
              powered          the adapter is powered on
              LE               the adapter does Bluetooth Low Energy (Adapter1.Roles)
            \(receiverChecks)\(nameCheck)  main.conf        its ControllerMode, Privacy, ExchangeMTU, GATT Channels
              kernel           4.x or later, for L2CAP channels
              clock            synchronised (adjtimex); the handshake refuses clocks 10 minutes apart

            Examples:
              \(tool) doctor
              \(tool) doctor --adapter hci1
              \(tool) doctor --json | jq '.checks[] | select(.ok | not)'

            A line that fails, and its fix:
              ✗ powered          hci0 is powered off
                                 fix: bluetoothctl power on

            Exit codes: 0 everything the \(role.rawValue) needs is fine (warnings allowed), 64 usage, \
            67 a check failed (the ✗ lines say which, and how to fix it).
            """
    }
}

/// `blesend doctor`: can this machine send?
struct SenderDoctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine's Bluetooth set-up for sending, and say how to fix what is wrong.",
        discussion: DoctorOptions.discussion(tool: "blesend", role: .sender))

    @OptionGroup var options: DoctorOptions

    func run() async throws { try await options.run(role: .sender, tool: "blesend") }
}

/// `blerecv doctor`: can this machine receive (which also needs advertising)?
struct ReceiverDoctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine's Bluetooth set-up for receiving, and say how to fix what is wrong.",
        discussion: DoctorOptions.discussion(tool: "blerecv", role: .receiver))

    @OptionGroup var options: DoctorOptions

    func run() async throws { try await options.run(role: .receiver, tool: "blerecv") }
}
