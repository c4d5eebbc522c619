#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Keys
import Storage
import Transfer

/// `blerecv partials [--out DIR] [--remove]`: the partial files this receiver keeps for a resume.
struct Partials: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, or remove, the partial files and folders kept for their senders to resume.",
        discussion: """
        A file or folder whose sender went away part-way is kept, hidden in the output folder, for \
        a resume (blerecv --keep-partials, default 168 hours after its last sync). This lists them: \
        name (a folder's ends with /), bytes kept of the size offered (a folder: its files \
        finished and the bytes it holds), sender, and when each expires. --remove deletes them; do \
        it while blerecv is stopped (a file it is receiving now would be cut off and started \
        over). Only this receiver's files (those of its key, --key) are shown or removed, never \
        those of another receiver sharing the folder: their count is said instead, and so is that of \
        the partials the service (blerecv.service) keeps in /var/lib/blesend/incoming.

        Examples:
          blerecv partials --out ~/Downloads --trust keys
          blerecv partials --out ~/Downloads --json
          sudo -u blesend blerecv partials --key /var/lib/blesend/id --out /var/lib/blesend/incoming --remove
        """)

    @Option(help: ArgumentHelp("The receiver's output folder; only read (one that does not exist is an error, exit 64).",
                               valueName: "dir"))
    var out: String = "."

    @Option(help: ArgumentHelp("The receiver's secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id).", valueName: "path"))
    var key: String?

    @Option(help: ArgumentHelp("The trust directory, to show senders by name (default: \(KeyDirectoryLocation.trustRule)).",
                               valueName: "dir"))
    var trust: String?

    @Option(name: .customLong("keep-partials"), help: ArgumentHelp("blerecv's --keep-partials, for when each expires.", valueName: "hours"))
    var keepPartialsHours: Int = 168

    @Flag(help: "Remove them.")
    var remove = false

    @Flag(help: "One JSON object per line: event \"partial\" for each (docs/json-events.md).")
    var json = false

    func validate() throws {
        if keepPartialsHours < 0 || keepPartialsHours > 24 * 365 { throw ValidationError("--keep-partials takes 0 to 8760 hours") }
    }

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in
            let identity = try KeyLocation.loadIdentity(key)
            let service = ServiceState.package
            guard service.exists(out) else {
                throw CLIError(.usage, "no folder \(out)",
                               hint: "--out takes the folder blerecv receives into (the service's is \(service.incoming))")
            }
            let folder: DirectoryFileStore
            do {
                folder = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o077), temporaryTag: identity.publicKey.fileTag)
            } catch {
                throw CLIError(error)
            }
            let names = (try? TrustStore.load(directory: KeyDirectoryLocation.trust(trust).path))?.peers ?? []
            let kept = folder.keptPartials()
            let now = folder.secondsSinceEpoch()
            for partial in kept {
                let point = partial.record.checkpoint
                let sender = PublicKey(bytes: point.senderKey)
                let name = sender.flatMap { key in names.first { $0.key == key }?.name }
                let expires = Self.expiry(savedAt: partial.record.savedAt, hours: keepPartialsHours)
                if json {
                    Console.out(JSONLine("partial", [
                        ("name", .string(point.name)), ("bytes", .of(point.durable)), ("total", .of(point.size)),
                        ("peer", name.map(JSONLine.Value.string) ?? .null), ("fingerprint", .string(sender?.fingerprint ?? "")),
                        ("saved_at", .of(partial.record.savedAt)), ("expires_at", .of(expires)), ("removed", .bool(remove)),
                    ]).text + "\n")
                } else {
                    // (names come from files on disk and from the trust directory: shown safe)
                    var line = "\(TerminalText.sanitized(point.name))  \(Formatting.bytes(point.durable))"
                    if let size = point.size, size > 0 {
                        line += " of \(Formatting.bytes(size)) (\(Self.percent(point.durable, of: size)) %)"
                    }
                    line += "  from \(Self.peer(name)) [\(sender?.fingerprint ?? "?")]"
                    line += "  synced \(Self.span(now > partial.record.savedAt ? now - partial.record.savedAt : 0)) ago"
                    line += now < expires ? ", expires in \(Self.span(expires - now))" : ", expired (removed at blerecv's next start)"
                    Console.out(line + "\n")
                }
            }
            let folders = folder.keptFolders()
            for tree in folders {
                let sender = PublicKey(bytes: tree.origin.senderKey)
                let name = sender.flatMap { key in names.first { $0.key == key }?.name }
                let expires = Self.expiry(savedAt: tree.savedAt, hours: keepPartialsHours)
                if json {
                    Console.out(JSONLine("partial", [
                        ("name", .string(tree.name + "/")), ("bytes", .of(tree.bytes)), ("total", .null), ("files", .int(Int64(tree.files))),
                        ("peer", name.map(JSONLine.Value.string) ?? .null), ("fingerprint", .string(sender?.fingerprint ?? "")),
                        ("saved_at", .of(tree.savedAt)), ("expires_at", .of(expires)), ("removed", .bool(remove)),
                    ]).text + "\n")
                } else {
                    var line = "\(TerminalText.sanitized(tree.name))/  \(tree.files) file(s) finished, \(Formatting.bytes(tree.bytes)) in all"
                    line += "  from \(Self.peer(name)) [\(sender?.fingerprint ?? "?")]"
                    line += "  synced \(Self.span(now > tree.savedAt ? now - tree.savedAt : 0)) ago"
                    line += now < expires ? ", expires in \(Self.span(expires - now))" : ", expired (removed at blerecv's next start)"
                    Console.out(line + "\n")
                }
            }
            if remove {
                let removed = folder.removeOwnTemporaries()
                if !json {
                    Console.err("blerecv: removed \(kept.count) partial file(s) and \(folders.count) folder(s) (\(removed) hidden name(s)) from \(out)\n")
                }
            } else if kept.isEmpty && folders.isEmpty && !json {
                Console.err("blerecv: no partial files of this receiver in \(out)\n")
            }
            for note in Self.notes(out: out, others: folder.keptByOthers(), service: service) { Console.err(note + "\n") }
        }
    }

    /// What `partials` does not show and says instead: partials in `out` of another receiver key
    /// (or user), and those the service keeps in its own folder (`service`).
    static func notes(out: String, others: Int, service: ServiceState) -> [String] {
        var notes: [String] = []
        if others > 0 {
            notes.append("blerecv: \(others) kept partial\(others == 1 ? " belongs" : "s belong") to another receiver key or user in \(out) "
                + "(see them with that receiver's --key, as its user)")
        }
        let note = service.note(tool: "blerecv", own: out, look: service.incoming, what: ("kept partial", "kept partials"), count: {
            guard service.exists(service.incoming) else { return 0 }
            // (any tag: the service's key is not ours to read)
            guard let store = try? DirectoryFileStore(directory: service.incoming, modes: FileModes(umask: 0o077), temporaryTag: "service")
            else { return nil }
            return store.keptByOthers(euid: uid_t.max)
        }, command: "sudo -u blesend blerecv partials --key \(service.folder)/id --out \(service.incoming)")
        if let note { notes.append(note) }
        return notes
    }

    /// A sender's name from the trust directory, shown safe.
    static func peer(_ name: String?) -> String { name.map(TerminalText.sanitized) ?? "an unknown sender" }

    /// How much of `size` is kept, in whole percent, whatever the numbers read from disk.
    static func percent(_ durable: UInt64, of size: UInt64) -> Int {
        size == 0 ? 0 : Int(min(100, Double(durable) / Double(size) * 100))
    }

    /// When a partial saved at `savedAt` (seconds, read from disk) expires: never past the last second.
    static func expiry(savedAt: UInt64, hours: Int) -> UInt64 {
        let (sum, overflow) = savedAt.addingReportingOverflow(UInt64(max(0, hours)) * 3600)
        return overflow ? .max : sum
    }

    /// `3 d 4 h`, `5 h 12 min`, `12 min`, `40 s`.
    static func span(_ seconds: UInt64) -> String {
        let (days, hours, minutes) = (seconds / 86_400, seconds / 3_600 % 24, seconds / 60 % 60)
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        return minutes > 0 ? "\(minutes) min" : "\(seconds) s"
    }
}
