#if canImport(Glibc)
import Glibc
#endif

/// The peers a receiver accepts: one `NAME.pub` file per trusted sender in a directory; the file
/// name (without `.pub`) is the name shown for that peer.
public struct TrustStore: Sendable {
    public struct Peer: Sendable, Hashable {
        public let name: String
        public let key: PublicKey

        public init(name: String, key: PublicKey) {
            self.name = name
            self.key = key
        }
    }

    public private(set) var peers: [Peer]
    private var byKey: [PublicKey: String]

    public init(peers: [Peer]) {
        self.peers = peers
        var byKey: [PublicKey: String] = [:]
        for peer in peers where byKey[peer.key] == nil { byKey[peer.key] = peer.name }
        self.byKey = byKey
    }

    /// Trusts one more peer (a key already trusted keeps its first name).
    public mutating func insert(_ peer: Peer) {
        peers.append(peer)
        if byKey[peer.key] == nil { byKey[peer.key] = peer.name }
    }

    /// The name of the peer with this key, or `nil` if it is not trusted.
    public func name(for key: [UInt8]) -> String? {
        guard let key = PublicKey(bytes: key) else { return nil }
        return byKey[key]
    }

    /// Loads every `*.pub` file in `directory` (sorted by name). A malformed file is an error that
    /// names it: a trust directory is security configuration, so nothing is skipped silently.
    /// So is a directory or `.pub` file that anyone but its owner may change, or whose owner is
    /// neither us nor root (`ownerOnlyWritableProblem`), and a `.pub` that is a symlink. The
    /// files are opened relative to the directory's descriptor, the one whose mode was checked.
    public static func load(directory: String) throws(KeyError) -> TrustStore {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw KeyError(.trustDirectory, "cannot open trust directory \(directory): \(String(cString: strerror(errno)))",
                           hint: "create it and add senders with: blerecv trust add <key> --name NAME --trust \(directory)")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw KeyError(.trustDirectory, "cannot check trust directory \(directory): \(String(cString: strerror(errno)))")
        }
        if let problem = ownerOnlyWritableProblem(status) {
            throw KeyError(.writableByOthers,
                           "trust directory \(directory): \(problem); whoever can write it can make this receiver trust their key",
                           hint: "run: chmod go-w \(directory)   (owned by you or root), then check the .pub files in it")
        }
        var peers: [Peer] = []
        for file in try listPublicKeyFiles(fd, directory) {
            let path = directory + "/" + file
            let keyFD = openat(fd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard keyFD >= 0 else {
                let code = errno
                if code == ELOOP {
                    throw KeyError(.trustDirectory, "\(path) is a symlink; a trust directory holds the .pub files themselves",
                                   hint: "replace it with a copy of the file it points to")
                }
                throw KeyError(.io, "cannot read \(path): \(String(cString: strerror(code)))")
            }
            defer { close(keyFD) }
            let contents = try KeyFile.read(fd: keyFD, path: path, secret: false, ownerOnly: true)
            peers.append(Peer(name: String(file.dropLast(4)), key: try KeyFile.publicKey(fileContents: contents, path: path)))
        }
        return TrustStore(peers: peers)
    }

    /// Adds `key` as `name` to the trust directory `directory` (created 0755 if missing):
    /// `NamedKeyDirectory.add`, idempotent for the same key under the same name, refusing a name
    /// another key holds or a key trusted under another name. Hints name the directory with
    /// `--trust`; `NamedKeyDirectory.trust(at:directoryOption:)` chooses otherwise.
    @discardableResult
    public static func add(_ key: PublicKey, name: String, directory: String) throws(KeyError) -> String {
        try NamedKeyDirectory.trust(at: directory, directoryOption: " --trust \(directory)").add(key, name: name)
    }

    static func listPublicKeyFiles(_ fd: Int32, _ directory: String) throws(KeyError) -> [String] {
        // fdopendir takes over the descriptor it is given: a duplicate, so `fd` stays open.
        let own = dup(fd)
        guard own >= 0 else {
            throw KeyError(.trustDirectory, "cannot read trust directory \(directory): \(String(cString: strerror(errno)))")
        }
        guard let dir = fdopendir(own) else {
            let code = errno
            close(own)
            throw KeyError(.trustDirectory, "cannot read trust directory \(directory): \(String(cString: strerror(code)))")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".pub"), !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
