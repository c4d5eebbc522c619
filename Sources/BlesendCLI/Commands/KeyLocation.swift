#if canImport(Glibc)
import Glibc
#endif
import Keys

/// Where a tool's own secret key lives unless `--key` says otherwise:
/// `$XDG_CONFIG_HOME/blesend/id`, else `~/.config/blesend/id`.
enum KeyLocation {
    static var defaultDirectory: String {
        if let xdg = environment("XDG_CONFIG_HOME"), !xdg.isEmpty { return xdg + "/blesend" }
        return (environment("HOME") ?? ".") + "/.config/blesend"
    }

    static var defaultPath: String { defaultDirectory + "/id" }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Our key pair; at the default path, made first if there is none there (pairing: a new
    /// user's first command). A key named with `--key` must exist.
    static func loadOrMakeIdentity(_ path: String?, tool: String) throws(CLIError) -> Identity {
        if path == nil, access(defaultPath, F_OK) != 0, errno == ENOENT {
            let identity = try makeKeyPair(at: nil, force: false)
            Console.err("\(tool): made this machine's key pair: \(defaultPath) (secret) and \(defaultPath).pub; fingerprint \(identity.publicKey.fingerprint)\n")
            return identity
        }
        return try loadIdentity(path)
    }

    /// Our key pair from `path` or the default one; a missing one is made with `tool keygen`.
    /// Makes a key pair and writes it to `path`, or to the default path (its folder made first,
    /// 0700: it holds a secret).
    static func makeKeyPair(at path: String?, force: Bool) throws(CLIError) -> Identity {
        if path == nil {
            _ = mkdir(defaultDirectory.components.dropLast().joined(separator: "/"), 0o755)
            _ = mkdir(defaultDirectory, 0o700)
        }
        let identity = Identity.generate()
        do throws(KeyError) {
            try KeyFile.writeKeyPair(identity, path: path ?? defaultPath, force: force)
        } catch {
            throw CLIError(error)
        }
        return identity
    }

    static func loadIdentity(_ path: String?, tool: String = "blesend") throws(CLIError) -> Identity {
        do {
            return try KeyFile.loadIdentity(path: path ?? defaultPath)
        } catch {
            var failure = CLIError(error)
            if failure.hint == missingKeyHint(tool: "blesend") { failure.hint = missingKeyHint(tool: tool) }
            throw failure
        }
    }

    /// The Keys module's hint for a missing secret key names blesend's keygen; blerecv has one too.
    static func missingKeyHint(tool: String) -> String { "make a key pair with: \(tool) keygen" }
}
