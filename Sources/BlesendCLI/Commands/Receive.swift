#if canImport(Glibc)
import Glibc
#endif
import Admission
import ArgumentParser
import Keys
import Storage
import Transfer

/// `blerecv [receive] [--trust DIR]`
struct Receive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Receive files from trusted senders.",
        discussion: """
        Advertises the blesend service and accepts files only from senders whose public keys are \
        in the trust directory (one NAME.pub per sender). Files are written to a hidden file in \
        the output folder and appear under their name only after the whole file is verified. An \
        existing file is never replaced unless --force; the new one gets a number \
        (report-1.pdf). Stored files get 0666 minus the umask (0777 minus the umask if the sender \
        marked them executable). An output folder other users may write is refused (exit 71), and \
        so is a trust directory or .pub file anyone but its owner may write (exit 65). The trust \
        directory is looked at again before every handshake: a .pub added or removed counts from \
        the next sender on, without a restart (a directory that then fails these checks trusts \
        nobody until it is fixed).

        A file whose sender went away part-way is kept for a resume, across restarts of blerecv and \
        power cuts too (--keep-partials, default 168 hours after its last byte): its bytes in a \
        hidden .blesend-part file in the output folder, synced every 256 KiB and when its link \
        drops, and a .blesend-keep record beside it. A folder part-way is kept likewise, hidden \
        with a .blesend-keep journal of the files it finished. When the sender comes back, with \
        blesend still running or run again with the same file, only the rest is sent; at start \
        blerecv checks what it kept (the bytes must hash as recorded, else that file starts over) \
        and removes its own leftovers that cannot be resumed, never another receiver's.

        Several senders are served at once (--max-links, default 3; one place is always kept \
        for a sender that proves a trusted key): over L2CAP channels, and one of them over GATT. \
        A device that connects and opens no transfer channel within 8 s is disconnected; a \
        sender has 10 s from connecting to prove its key; a device that fails or stays silent is \
        refused for 2 s, then 4, 8 ... up to a minute; a stranger never displaces a sender that \
        proved its key. With every place taken, one more sender can still connect and is told \
        when to come back (blesend waits and tries again until its --timeout). With -v each of \
        these decisions is logged.

        Private discovery (--private-discovery): the advertisement carries, instead of the \
        service UUID, a few bytes from which each trusted sender, and nobody else, recognises \
        this receiver without connecting; they change at every new advertisement. Senders with \
        --private-discovery find it and skip receivers that do not list them; other senders do \
        not find it at all. It needs LE privacy (Privacy = device under [General] in \
        /etc/bluetooth/main.conf, then restart bluetooth): without it the adapter's fixed address \
        links every advertisement, so blerecv refuses to start (exit 78) unless given \
        --allow-public-address.

        First contact (--ask): a sender whose key is not in the trust directory is not refused at \
        once. Its fingerprint and what it offers are shown, and you are asked to type the 6-digit \
        code that blesend shows on the sender (spaces do not matter). If you type that code, you \
        are asked for a name, its key is added to the trust directory under it, and the transfer \
        goes on. Another code (someone is in the middle, or it is another sender's code), an \
        empty answer or no answer within 2 minutes refuses it, and nothing is written. One \
        sender is asked about at a time; another that arrives meanwhile is refused without a \
        question, and a sender key or device that was refused, or not answered, is refused \
        without a question for 30 s, then 1, 2, 4 ... minutes (at most an hour). Whatever was \
        typed before a question is thrown away. While --ask runs, anyone who has this \
        receiver's public key can tell that this device is that receiver.

        The trust directory (--trust) is by default \(KeyDirectoryLocation.trustRule); \
        blerecv trust add, list, remove and rename manage it. --ask makes it (mode 0700) if it is \
        missing. The output folder (--out, default the current folder) is made, mode 0700, if it \
        is missing and its parent folder exists; otherwise blerecv says which mkdir -p to run.

        Examples:
          blerecv --out ~/Downloads
          blerecv --ask
          blerecv --trust keys/ --out ~/Downloads
          blerecv --once
          blerecv --stdout > stream.bin
          blerecv trust add ./alice.pub --name alice

        Exit codes: 0 ok, 64 usage, 65 key file, 67 no adapter or bluetoothd, 70 integrity, \
        71 local I/O (disk full, folder not writable or writable by others), 72 a file was refused (bad name, too large), \
        76 the sender broke the protocol, 78 --private-discovery without LE privacy, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 the terminal went away (SIGHUP).
        """)

    @Option(help: ArgumentHelp("Directory of trusted senders' public keys, NAME.pub each (default: \(KeyDirectoryLocation.trustRule)).",
                               valueName: "dir"), completion: .directory)
    var trust: String?

    @Option(help: ArgumentHelp("Your secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id).", valueName: "path"), completion: .file())
    var key: String?

    @Option(help: ArgumentHelp(
        "Where to keep what must survive a restart: the replay guard and the history (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/blesend or ~/.local/state/blesend).",
        valueName: "dir"), completion: .directory)
    var state: String?

    @Option(help: ArgumentHelp(
        "Where to put received files (default: the current folder). Made, mode 0700, if missing and its parent folder exists.",
        valueName: "dir"), completion: .directory)
    var out: String = "."

    @Option(help: ArgumentHelp(
        "MiB to keep free on the output folder's file system: a file that would eat into them is refused, a stream stopped (default: 5 % of it, at most 1024).",
        valueName: "MiB"))
    var reserve: Int?

    @Option(name: .customLong("keep-partials"), help: ArgumentHelp(
        "Hours a file whose sender went away part-way is kept for a resume, across restarts (0: only while blerecv runs, for 10 minutes).",
        valueName: "hours"))
    var keepPartialsHours: Int = 168

    @Flag(help: "Exit after one sender has finished.")
    var once = false

    @Flag(help: "Write a single incoming file to standard output instead of a folder, then exit.")
    var stdout = false

    @Flag(help: "Replace existing files instead of saving under a numbered name.")
    var force = false

    @Option(help: ArgumentHelp("Bluetooth adapter to use, e.g. hci0 (default: BlueZ's first adapter).", valueName: "hciN"))
    var adapter: String?

    @Flag(name: .customLong("no-l2cap"), help: ArgumentHelp(
        "Serve GATT only: no L2CAP channel and no PSM in the service, as blerecv before L2CAP (senders then use GATT)."))
    var noL2CAP = false

    @Flag(name: .customLong("private-discovery"), help: "Let trusted senders recognise this receiver from its advertisement (see above).")
    var privateDiscovery = false

    @Flag(name: .customLong("allow-public-address"), help: ArgumentHelp(
        "With --private-discovery: advertise even though the adapter shows its fixed address (LE privacy off), which links every advertisement."))
    var allowPublicAddress = false

    @Flag(help: ArgumentHelp(
        "First contact: ask on this terminal about a sender whose key is not trusted yet (see above).",
        discussion: "Needs a terminal on standard input and standard error."))
    var ask = false

    @Option(name: .customLong("max-links"), help: ArgumentHelp(
        "How many senders are served at once (at least 2: one place is kept for senders that prove a trusted key).",
        valueName: "n"))
    var maxLinks: Int = AdmissionConfiguration.defaultMaxLinks

    @Flag(name: .customLong("one-link"), help: ArgumentHelp(
        "Stay unconnectable while a device is connected, for a controller that cannot hold two LE links at once.",
        discussion: "Senders then find this receiver only once the connected one has left; several senders are served at once only over one link."))
    var oneLink = false

    @OptionGroup var output: OutputOptions

    @OptionGroup var progress: ProgressOption

    func validate() throws {
        if ask && (isatty(0) != 1 || isatty(2) != 1) {
            throw ValidationError("--ask asks on the terminal: standard input and standard error must be a terminal")
        }
        if maxLinks < 2 || maxLinks > 16 { throw ValidationError("--max-links takes 2 to 16") }
        if stdout && output.json { throw ValidationError("--stdout and --json both want standard output; pick one") }
        if stdout && out != "." { throw ValidationError("--stdout and --out exclude each other") }
        if let reserve, reserve < 0 || reserve > 1 << 30 { throw ValidationError("--reserve takes 0 or more MiB") }
        if keepPartialsHours < 0 || keepPartialsHours > 24 * 365 { throw ValidationError("--keep-partials takes 0 to 8760 hours") }
    }

    /// How long partial files are kept across runs; nil: not kept across runs.
    var keptPartials: Duration? { keepPartialsHours > 0 && !stdout ? .seconds(keepPartialsHours * 3600) : nil }

    func run() async throws {
        // Read once, first: the modes stored files get (umask(2) can only be read by setting it).
        let modes = FileModes.current()
        let reporter = output.reporter(tool: "blerecv", progress: progress.progress)
        Interrupts.shared.install()
        try await runReporting(tool: "blerecv", reporter: reporter) { () async throws(CLIError) in
            let identity = try KeyLocation.loadIdentity(key, tool: "blerecv")
            let trustDirectory = KeyDirectoryLocation.trust(trust)
            let trusted = try ReceiveSetup.trustDirectory(trustDirectory, asking: ask, reporter: reporter)
            let store: any FileStore
            if stdout {
                store = StandardOutputStore()
            } else {
                try ReceiveSetup.outputFolder(out, reporter: reporter)
                let directory: DirectoryFileStore
                do {
                    directory = try DirectoryFileStore(directory: out, overwrite: force, modes: modes,
                                                       temporaryTag: identity.publicKey.fileTag, keepPartials: keptPartials)
                    try directory.checkWritable()
                } catch { throw CLIError(error) }
                do { try directory.checkOnlyOwnerWrites() } catch { throw CLIError(error) }
                directory.reserve = DiskReserve(bytes: reserve.map { UInt64($0) << 20 })
                // Kept partials are looked through when the receiver starts (`recoverPartials`).
                if keptPartials == nil {
                    let stale = directory.removeStaleTemporaries()
                    if stale > 0 { reporter.logger.notice("removed \(stale) partial file(s) left by an earlier run") }
                }
                store = directory
            }
            let stateFolder = StateLocation.folder(state)
            let journal = try StateLocation.replayJournal(in: stateFolder, for: identity)
            if journal.replacedUnreadable {
                reporter.logger.warning("the replay guard in \(stateFolder) did not read (damaged, or not blesend's): replaced by an empty one")
            }
            if journal.cutBytes > 0 {
                reporter.logger.warning("the replay guard in \(stateFolder) ended in \(journal.cutBytes) damaged byte(s) (a crash while writing?): cut off")
            }
            reporter.logger.info("replay guard: \(journal.count) sender key(s) remembered in \(stateFolder)")
            var operation = ReceiveOperation(
                identity: identity, trust: LiveTrust(trusted), store: store, outDirectory: stdout ? nil : out,
                adapter: adapter, l2cap: !noL2CAP, once: once || stdout, privateDiscovery: privateDiscovery,
                allowPublicAddress: allowPublicAddress,
                askingInto: ask ? trustDirectory.path : nil, replayMemory: journal, reporter: reporter)
            let history = History(folder: stateFolder, name: History.receivedName, reporter: reporter, inBackground: true)
            // What is queued is written before the process ends, interrupted too.
            let flushing = Interrupts.shared.add { history.flush() }
            defer {
                Interrupts.shared.remove(flushing)
                history.flush()
            }
            operation.history = history
            if !stdout { operation.completedMemory = StateLocation.completedJournal(in: stateFolder, for: identity, reporter: reporter) }
            if let keptPartials {
                operation.partialLifetime = keptPartials
                Interrupts.shared.keepPartials()
            }
            // --stdout takes one file: one sender at a time, as before.
            operation.maxLinks = stdout ? 2 : maxLinks
            operation.oneLink = oneLink
            try await operation.run()
        }
    }
}
