#if canImport(Glibc)
import Glibc
#endif

/// A directory of named public keys, one `NAME.pub` per peer, the file name (without `.pub`) its
/// name: the receiver's trust directory (`blerecv trust`) and the sender's address book of
/// receivers (`blesend receivers`) are both one. Reading it runs `TrustStore.load`'s checks (a
/// directory or `.pub` that others may write is refused: whoever can write either can make us
/// trust, or send to, their key). Every change is one file created with `O_EXCL` or removed, so
/// a receiver that reads the directory again (`TrustDirectory`) sees the old or the new state.
///
/// Errors name the command that fixes them (`blerecv trust rename alice alice-old`), built from
/// `kind` and `directoryOption`.
public struct NamedKeyDirectory: Sendable, Equatable {
    /// Whose keys these are: decides the commands named in hints, file comments and the mode a
    /// new directory gets.
    public enum Kind: Sendable, Equatable {
        /// The senders a receiver accepts (`blerecv trust`).
        case trustedSenders
        /// The receivers a sender sends to by name (`blesend receivers`).
        case receivers

        /// The command group that manages this kind of directory.
        public var command: String {
            switch self {
            case .trustedSenders: "blerecv trust"
            case .receivers: "blesend receivers"
            }
        }

        /// What an entry is, for messages: "trusted sender", "receiver".
        public var entry: String {
            switch self {
            case .trustedSenders: "trusted sender"
            case .receivers: "receiver"
            }
        }

        /// A new directory's mode. A trust directory is read by a receiver that may run as another
        /// user (blerecv.service, as blesend, reads root's /etc/blesend/trusted); an address book
        /// is its owner's alone.
        var directoryMode: mode_t {
            switch self {
            case .trustedSenders: 0o755
            case .receivers: 0o700
            }
        }

        func comment(name: String, key: PublicKey) -> String {
            switch self {
            case .trustedSenders: "# trusted blesend peer \"\(name)\", fingerprint \(key.fingerprint)\n"
            case .receivers: "# blesend receiver \"\(name)\", fingerprint \(key.fingerprint)\n"
            }
        }
    }

    public let path: String
    public let kind: Kind
    /// What the commands in hints carry after their arguments to reach this directory: empty for
    /// the default one, else e.g. ` --trust keys`.
    public let directoryOption: String

    public init(path: String, kind: Kind, directoryOption: String = "") {
        self.path = path
        self.kind = kind
        self.directoryOption = directoryOption
    }

    /// The command line that does `words` to this directory: `blerecv trust remove alice --trust keys`.
    public func command(_ words: String) -> String { "\(kind.command) \(words)\(directoryOption)" }

    /// Where the entry called `name` is (or would be) stored.
    public func filePath(_ name: String) -> String { path + "/" + name + ".pub" }

    /// Every entry, sorted by name, after `TrustStore.load`'s checks; none when the directory does
    /// not exist yet.
    public func entries() throws(KeyError) -> [TrustStore.Peer] {
        var status = stat()
        if lstat(path, &status) != 0 && errno == ENOENT { return [] }
        return try TrustStore.load(directory: path).peers
    }

    /// Adds `key` as `name` and returns the file's path. The same key under the same name again
    /// changes nothing (and returns the same path). Refuses a name that is not a plain file name
    /// (`isUsableName`), a name another key holds (`.nameTaken`) and a key already there under
    /// another name (`.keyTaken`), each with the command that renames or removes the holder.
    /// Creates the directory (and its parents) if missing.
    @discardableResult
    public func add(_ key: PublicKey, name: String) throws(KeyError) -> String {
        try Self.checkName(name)
        let present = try entries()
        if let holder = present.first(where: { $0.key == key }) {
            if holder.name == name { return filePath(name) }
            let already = kind == .trustedSenders ? "already trusted" : "already in the address book"
            throw KeyError(.keyTaken, "this key is \(already) as \"\(holder.name)\" in \(path)",
                           hint: "to call it \(name) instead: \(command("rename \(holder.name) \(name)"))")
        }
        if let holder = present.first(where: { $0.name == name }) {
            throw nameTaken(name, by: holder)
        }
        try createIfMissing()
        do {
            try KeyFile.writeNew(path: filePath(name), contents: Array((kind.comment(name: name, key: key) + key.text + "\n").utf8), mode: 0o644)
        } catch where error.code == .exists {
            // Written by someone else since the directory was read.
            throw KeyError(.nameTaken, "the name \"\(name)\" is taken in \(path)",
                           hint: "pick another --name, or free it: \(command("rename \(name) \(name)-old")) or \(command("remove \(name)"))")
        }
        syncDirectory()
        return filePath(name)
    }

    /// Removes the entries that `nameOrFingerprint` designates (`find`) and returns them. A
    /// receiver reading this directory refuses their keys from its next handshake on.
    @discardableResult
    public func remove(_ nameOrFingerprint: String) throws(KeyError) -> [TrustStore.Peer] {
        let found = try find(nameOrFingerprint)
        for peer in found where unlink(filePath(peer.name)) != 0 {
            throw KeyError(.io, "cannot remove \(filePath(peer.name)): \(String(cString: strerror(errno)))")
        }
        syncDirectory()
        return found
    }

    /// Gives the entry `old` (a name, or a fingerprint that designates one entry) the name `new`
    /// and returns its new path: the new file is written first, then the old one removed, so that
    /// the key is trusted throughout. Refuses a `new` that another key holds.
    @discardableResult
    public func rename(_ old: String, to new: String) throws(KeyError) -> String {
        try Self.checkName(new)
        let found = try find(old)
        guard found.count == 1, let peer = found.first else {
            throw KeyError(.keyTaken, "that fingerprint is in \(path) under \(found.count) names: \(found.map(\.name).joined(separator: ", "))",
                           hint: "rename one of them by its name")
        }
        if peer.name == new { return filePath(new) }
        if let holder = try entries().first(where: { $0.name == new }) {
            throw nameTaken(new, by: holder)
        }
        do {
            try KeyFile.writeNew(path: filePath(new), contents: Array((kind.comment(name: new, key: peer.key) + peer.key.text + "\n").utf8),
                                 mode: 0o644)
        } catch where error.code == .exists {
            throw KeyError(.nameTaken, "the name \"\(new)\" is taken in \(path)", hint: "pick another name, or \(command("remove \(new)"))")
        }
        guard unlink(filePath(peer.name)) == 0 else {
            let code = errno
            unlink(filePath(new))
            throw KeyError(.io, "cannot remove \(filePath(peer.name)): \(String(cString: strerror(code)))")
        }
        syncDirectory()
        return filePath(new)
    }

    /// The entries `nameOrFingerprint` designates: the one of that name, else every one whose key
    /// has that fingerprint (32 hex digits; spaces and case do not matter). None is an error
    /// (`.unknownName`) that says how to list the entries.
    public func find(_ nameOrFingerprint: String) throws(KeyError) -> [TrustStore.Peer] {
        let present = try entries()
        if let named = present.first(where: { $0.name == nameOrFingerprint }) { return [named] }
        if let digits = Self.fingerprintDigits(nameOrFingerprint) {
            let matching = present.filter { Self.fingerprintDigits($0.key.fingerprint) == digits }
            if !matching.isEmpty { return matching }
        }
        throw KeyError(.unknownName, "no \(kind.entry) called \"\(nameOrFingerprint)\" in \(path)",
                       hint: "see the names and fingerprints with: \(command("list"))")
    }

    /// The key of the entry called `name`; nil when there is none.
    public func key(named name: String) throws(KeyError) -> PublicKey? {
        try entries().first { $0.name == name }?.key
    }

    /// Creates the directory, and any parent folder missing, if it does not exist: the directory
    /// with `mode` (default: the kind's), parents with 0755 minus the umask, as `mkdir -p`.
    /// Returns whether it made the directory.
    @discardableResult
    public func createIfMissing(mode: mode_t? = nil) throws(KeyError) -> Bool {
        var status = stat()
        if stat(path, &status) == 0 { return false }
        var prefix = path.hasPrefix("/") ? "" : "."
        let parts = path.split(separator: "/")
        for (index, part) in parts.enumerated() {
            prefix += "/" + part
            let last = index == parts.count - 1
            if mkdir(prefix, last ? (mode ?? kind.directoryMode) : 0o755) != 0 && errno != EEXIST {
                throw KeyError(.io, "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
        // The umask may have removed bits; the mode asked for, exactly.
        chmod(path, mode ?? kind.directoryMode)
        return true
    }

    /// Whether `name` can name an entry: letters, digits, `-`, `_`, `.`, not starting with `.`,
    /// at most 64 bytes (a plain file name, never a path).
    public static func isUsableName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64, !name.hasPrefix(".") else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            (scalar.properties.isAlphabetic || scalar.properties.numericType != nil || "-_.".unicodeScalars.contains(scalar))
                && scalar.value > 0x20
        }
    }

    static func checkName(_ name: String) throws(KeyError) {
        guard isUsableName(name) else {
            throw KeyError(.trustDirectory, "\"\(name)\" is not a usable peer name",
                           hint: "use letters, digits, '-', '_' or '.', not starting with '.', at most 64 characters")
        }
    }

    private func nameTaken(_ name: String, by holder: TrustStore.Peer) -> KeyError {
        KeyError(.nameTaken, "the name \"\(name)\" is taken in \(path) by another key (fingerprint \(holder.key.fingerprint))",
                 hint: "pick another name, or free it: \(command("rename \(name) \(name)-old")) or \(command("remove \(name)"))")
    }

    /// The 32 lowercase hex digits of a fingerprint as typed (spaces, tabs and case ignored); nil if
    /// it is not one.
    static func fingerprintDigits(_ text: String) -> String? {
        let digits = text.lowercased().filter { $0 != " " && $0 != "\t" }
        guard digits.count == PublicKey.fingerprintBytes * 2, digits.allSatisfy(\.isHexDigit) else { return nil }
        return digits
    }

    /// Makes a change to the directory's entries durable (best effort: it is made already).
    private func syncDirectory() {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

extension NamedKeyDirectory {
    /// A receiver's trust directory.
    public static func trust(at path: String, directoryOption: String = "") -> NamedKeyDirectory {
        NamedKeyDirectory(path: path, kind: .trustedSenders, directoryOption: directoryOption)
    }

    /// A sender's address book of receivers.
    public static func receiverBook(at path: String, directoryOption: String = "") -> NamedKeyDirectory {
        NamedKeyDirectory(path: path, kind: .receivers, directoryOption: directoryOption)
    }
}
