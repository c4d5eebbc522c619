import ArgumentParser
import BlueZ
import Discovery
import Keys
import Session
import Storage
import Transfer

/// `blesend [send] --to KEY FILE...`
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send files to a receiver you pinned by its public key.",
        discussion: """
        Scans for a blerecv advertising nearby, checks signal strength, connects, proves the \
        receiver holds the key given with --to, and sends the files encrypted end to end. If the \
        link drops, blesend reconnects and resumes where the data stopped; stopped and run again \
        with the same files or folder for the same receiver, it resumes what the receiver kept.

        Transport: by default (--transport auto) an L2CAP channel when the receiver offers one \
        (several times faster: the data bypasses bluetoothd), GATT otherwise or if the channel \
        does not open within 3 s. A resumed transfer may come back on either.

        One run at a time on an adapter: a blesend started while another sends from the same \
        adapter waits for it to finish, and says so (the two would share one link, and cut it).

        Folders: a folder is sent whole, with its subfolders (empty ones too) and files; the \
        receiver builds it hidden and shows it only once everything in it has arrived and checked \
        out, under the same name or a numbered one (photos-1) if that is taken. Symbolic links, \
        devices and pipes inside it are skipped with a warning; only the executable bit of a \
        file's mode travels. Many files go one after another without a pause between them.

        Compression: where the receiver takes it, file data travels zstd-compressed, chunk by chunk and only where that makes it smaller (text shrinks; photos, archives and random bytes go as they are). Compressed sizes say something about the content to someone watching the radio (docs/threat-model.md); --no-compress turns it off.

        First contact: a receiver run with blerecv --ask that does not know your key yet asks \
        its user about you. blesend then shows a 6-digit code and waits (up to about 2 minutes): \
        the receiver's user types it on the receiver (blerecv does not show it). If they type it \
        and accept your key, the files go on the same connection; if not, blesend exits 66 and \
        nothing is kept there.

        The receiver (--to): a name from your address book (blesend receivers add pins one; \
        blesend receivers list shows them), the key text, or a .pub file. A name goes before a \
        file of the same name without .pub in the current folder; write ./NAME for the file.

        Examples:
          blesend --to office-pi report.pdf
          blesend --to blesend-pub1:... report.pdf
          blesend --to ./receiver.pub a.jpg b.jpg notes.txt
          blesend --to ./receiver.pub photos/ notes.txt
          tar c photos | blesend --to ./receiver.pub - --name photos.tar
          blesend --to ./receiver.pub --json big.iso > events.ndjson

        Exit codes: 0 ok, 64 usage, 65 key file, 66 untrusted or mismatched peer, 67 no adapter \
        or bluetoothd (or the receiver's characteristic held by another local program), \
        68 peer not found, 69 link lost, 70 integrity, 71 local I/O, \
        72 file rejected by the receiver, 73 --transport l2cap but no channel, \
        75 the receiver stayed busy with other senders (or never answered) until --timeout, \
        76 the receiver broke the protocol, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 129 the terminal went away (SIGHUP).
        """)

    @Option(help: ArgumentHelp(
        "The receiver: a name from your address book (blesend receivers list), its public key (blesend-pub1:…) or its .pub file.",
        valueName: "name|key"), completion: .file(extensions: ["pub"]))
    var to: String

    @Argument(help: ArgumentHelp("Files and folders to send; - reads standard input as a stream.", valueName: "file"), completion: .file())
    var files: [String] = []

    @Option(help: "Name to offer for the standard-input stream (with -).")
    var name: String?

    @Option(help: ArgumentHelp("Your secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id).", valueName: "path"), completion: .file())
    var key: String?

    @Option(help: ArgumentHelp("Bluetooth adapter to use, e.g. hci1 (default: BlueZ's first adapter).", valueName: "hciN"))
    var adapter: String?

    @Option(name: .customLong("min-rssi"), parsing: .unconditional, help: ArgumentHelp(
        "Skip receivers weaker than this, in dBm. -80 suits a room; Apple's sample used -50 (arm's length). Adapters that report no RSSI are not skipped.",
        valueName: "dBm"))
    var minRSSI: Int = -80

    @Option(help: ArgumentHelp("Seconds to look for the receiver.", valueName: "seconds"))
    var timeout: Int = 30

    @Option(help: ArgumentHelp(
        "auto: an L2CAP channel where the receiver offers one, else GATT; l2cap: a channel or fail (exit 73); gatt: GATT only.",
        valueName: "auto|l2cap|gatt"))
    var transport: TransportChoice = .auto

    @Flag(name: .customLong("no-compress"), help: "Send file data as it is, never compressed.")
    var noCompress = false

    @Flag(name: .customLong("private-discovery"), help: ArgumentHelp(
        "Also find receivers started with --private-discovery: try one that lists you first, never one that does not."))
    var privateDiscovery = false

    @Option(help: ArgumentHelp(
        "Where to keep the history and the transfer ids of files and folders not yet saved, so that a run again resumes them (default: $XDG_STATE_HOME/blesend or ~/.local/state/blesend).",
        valueName: "dir"), completion: .directory)
    var state: String?

    @OptionGroup var output: OutputOptions

    @OptionGroup var progress: ProgressOption

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file to send (or - for standard input)") }
        guard files.filter({ $0 == "-" }).count <= 1 else { throw ValidationError("- (standard input) can be given only once") }
        if name != nil && !files.contains("-") { throw ValidationError("--name names the standard-input stream; give - as a file") }
        guard (-127...20).contains(minRSSI) else { throw ValidationError("--min-rssi must be between -127 and 20 dBm") }
        guard timeout > 0 else { throw ValidationError("--timeout must be at least 1 second") }
    }

    func run() async throws {
        let reporter = output.reporter(tool: "blesend", progress: progress.progress)
        Interrupts.shared.install()
        try await runReporting(tool: "blesend", reporter: reporter) { () async throws(CLIError) in
            let identity = try KeyLocation.loadIdentity(key)
            let receiverKey: PublicKey, receiverName: String
            do {
                (receiverKey, receiverName) = try ReceiverAddress.resolve(to, book: KeyDirectoryLocation.receivers())
            } catch { throw CLIError(error) }
            let outgoing = OutgoingTransferIDs(stateFolder: StateLocation.folder(state), receiver: receiverKey)
            if outgoing == nil {
                reporter.warn("cannot keep transfer ids in \(StateLocation.folder(state)): a file cut off now starts over when sent again")
            }
            var items: [OutgoingItem] = []
            for file in files {
                if file == "-" {
                    items.append(.file(StreamSource(fd: 0, name: name ?? "stdin")))
                } else if LocalTree.isFolder(file) {
                    items += try Self.folderItems(file, outgoing: outgoing, reporter: reporter)
                } else {
                    do { items.append(.file(try LocalFileSource(path: file))) } catch { throw CLIError(error) }
                }
            }
            for problem in outgoing?.assign(items.compactMap { if case .file(let source) = $0 { source as? LocalFileSource } else { nil } }) ?? [] {
                reporter.warn(problem)
            }
            let radio = RadioOptions(adapter: adapter, transport: transport, minimumRSSI: Int16(minRSSI), scanTimeout: .seconds(timeout))
            let operation = SendOperation(
                identity: identity, receiverKey: receiverKey, receiverName: receiverName, items: items,
                radio: radio, compresses: !noCompress, outgoing: outgoing,
                history: History(folder: StateLocation.folder(state), name: History.sentName, reporter: reporter),
                connector: BlueZConnector(radio: radio,
                                          recognises: privateDiscovery ? Self.recogniser(identity: identity, receiver: receiverKey) : nil),
                reporter: reporter)
            // One run at a time on an adapter: a second would share, and cut, this one's link.
            var lock: AdapterLock?
            if let path = AdapterLock.path(adapter: adapter) {
                lock = await AdapterLock.acquire(path: path) {
                    reporter.say("blesend: another blesend is sending from \(adapter ?? "this machine's adapter"); waiting for it to finish (Ctrl-C to stop)")
                }
            }
            try await operation.run()
            withExtendedLifetime(lock) {}
        }
    }

    /// The items of the folder at `path`: its folders, its files (each opened only when it is sent),
    /// then its commit. What cannot be sent (symlinks, devices, unreadable files, names the receiver
    /// would refuse) is skipped with a warning. A folder an earlier run began sending to the same
    /// receiver goes under that run's ids (`OutgoingTransferIDs`), so the receiver resumes it.
    static func folderItems(_ path: String, outgoing: OutgoingTransferIDs?, reporter: Reporter) throws(CLIError) -> [OutgoingItem] {
        let tree: LocalTree
        do { tree = try LocalTree(listing: path) } catch { throw CLIError(error) }
        for skipped in tree.skipped {
            reporter.warn("skipping \(skipped)")
        }
        guard let kept = outgoing?.treeID(for: path) else { return tree.outgoingItems(tree: randomTransferID()) }
        if let problem = kept.problem { reporter.warn("cannot keep the tree id of \(path): \(problem)") }
        return tree.outgoingItems(tree: kept.id, fileID: { OutgoingTransferIDs.fileID(tree: kept.id, entry: $0) }, sentBefore: kept.kept)
    }

    /// Whether a receiver's private-discovery data lists this sender (nil: data it cannot read).
    /// Without a pair key (a receiver key no DH works with) it recognises nothing.
    static func recogniser(identity: Identity, receiver: PublicKey) -> (@Sendable ([UInt8]) -> Bool?)? {
        guard let key = try? DiscoveryKey.forSender(identity: identity, receiver: receiver) else { return nil }
        return { data in (try? DiscoveryAdvertisement.parse(data))?.lists(key) }
    }
}

extension TransportChoice: ExpressibleByArgument {}
