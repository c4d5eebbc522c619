#if canImport(Glibc)
import Glibc
#endif
import Sodium

/// Reading and writing key files.
///
/// A key file holds one key line; blank lines and lines starting with `#` are comments. Files are
/// read with a size cap. A secret key file must be a regular file that only its owner can read;
/// new files are created with `O_EXCL` (never overwritten) and mode 0600 for secrets.
public enum KeyFile {
    static let maxSize = 64 * 1024

    /// Loads our identity from a secret key file, refusing one that others can read.
    public static func loadIdentity(path: String) throws(KeyError) -> Identity {
        var contents = try read(path: path, secret: true)
        defer { secureZero(&contents) }
        return try identity(fileContents: contents, path: path)
    }

    /// Loads a public key from a `.pub` file.
    public static func loadPublicKey(path: String) throws(KeyError) -> PublicKey {
        try publicKey(fileContents: try read(path: path, secret: false), path: path)
    }

    /// Parses the contents of a secret key file (`path` names it in errors). The caller wipes `contents`.
    package static func identity(fileContents contents: [UInt8], path: String) throws(KeyError) -> Identity {
        let line = try keyLine(in: contents, path: path)
        do {
            return try Identity(secretText: line)
        } catch {
            throw KeyError(error.code, "\(path): \(error.message)", hint: error.hint)
        }
    }

    /// Parses the contents of a `.pub` file (`path` names it in errors).
    package static func publicKey(fileContents contents: [UInt8], path: String) throws(KeyError) -> PublicKey {
        let line = try keyLine(in: contents, path: path)
        do {
            return try PublicKey(text: String(decoding: line, as: UTF8.self))
        } catch {
            throw KeyError(error.code, "\(path): \(error.message)", hint: error.hint)
        }
    }

    /// A public key given on the command line: the key text itself (as pasted: `PublicKey(pasted:)`),
    /// or the path of a `.pub` file.
    public static func resolvePublicKey(_ argument: String) throws(KeyError) -> PublicKey {
        let bytes = Array(argument.utf8)
        if bytes.trimmedASCIIWhitespace().starts(with: Array(KeyText.publicPrefix.utf8)) { return try PublicKey(pasted: bytes) }
        if bytes.contains(prefix: Array(KeyText.secretPrefix.utf8)) { throw KeyError.secretWherePublic }
        var status = stat()
        guard stat(argument, &status) == 0 else {
            // A pasted .pub file: comment lines, then the key.
            if bytes.contains(prefix: Array(KeyText.publicPrefix.utf8)) { return try PublicKey(pasted: bytes) }
            throw KeyError(.badEncoding, "\(argument) is neither a public key (blesend-pub1:…) nor a readable .pub file")
        }
        return try loadPublicKey(path: argument)
    }

    /// Writes a new key pair: `path` (secret, 0600) and `path.pub` (public, 0644). Both are created
    /// with `O_EXCL`; with `force`, existing files are removed first. No half pair is left behind.
    public static func writeKeyPair(_ identity: Identity, path: String, force: Bool) throws(KeyError) {
        let publicPath = path + ".pub"
        if force {
            unlink(path)
            unlink(publicPath)
        } else {
            for existing in [path, publicPath] where access(existing, F_OK) == 0 {
                throw KeyError(.exists, "\(existing) already exists; not overwriting a key",
                               hint: "pick another path with -o, or pass --force to replace it (the old key is lost)")
            }
        }
        var secretText = identity.secretTextBytes()
        defer { secureZero(&secretText) }
        let comment = Array("# blesend secret key: keep this file private (mode 0600)\n".utf8)
        // Sized up front: appending never moves the secret to a new buffer and leaves the old one.
        var secretLine: [UInt8] = []
        secretLine.reserveCapacity(comment.count + secretText.count + 1)
        secretLine.append(contentsOf: comment)
        secretLine.append(contentsOf: secretText)
        secretLine.append(0x0A)
        defer { secureZero(&secretLine) }
        try writeNew(path: path, contents: secretLine, mode: 0o600)
        let publicLine = Array(("# blesend public key: share this line, fingerprint \(identity.publicKey.fingerprint)\n"
            + identity.publicKey.text + "\n").utf8)
        do {
            try writeNew(path: publicPath, contents: publicLine, mode: 0o644)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Creates `path` with `O_EXCL` and writes `contents`; on any failure nothing is left at `path`.
    static func writeNew(path: String, contents: [UInt8], mode: mode_t) throws(KeyError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw KeyError(.exists, "\(path) already exists; not overwriting it") }
            throw KeyError(.io, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        // The umask may have removed bits; set exactly what we asked for.
        fchmod(fd, mode)
        var written = 0
        while written < contents.count {
            let n = contents.withUnsafeBytes { write(fd, $0.baseAddress! + written, contents.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                close(fd)
                unlink(path)
                throw KeyError(.io, "cannot write \(path): \(String(cString: strerror(code)))")
            }
            written += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            unlink(path)
            throw KeyError(.io, "cannot write \(path)")
        }
    }

    /// Reads a key file with a size cap; for a secret, refuses a file others can read.
    static func read(path: String, secret: Bool) throws(KeyError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let hint = code == ENOENT && secret ? "make a key pair with: blesend keygen" : nil
            throw KeyError(.io, "cannot read \(path): \(String(cString: strerror(code)))", hint: hint)
        }
        defer { close(fd) }
        return try read(fd: fd, path: path, secret: secret)
    }

    /// `read(path:secret:)` for a file already open at `fd` (`path` names it in errors); with
    /// `ownerOnly`, also refuses a file that anyone but its owner (us or root) may change.
    static func read(fd: Int32, path: String, secret: Bool, ownerOnly: Bool = false) throws(KeyError) -> [UInt8] {
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw KeyError(.io, "\(path) is not a regular file")
        }
        if ownerOnly, let problem = ownerOnlyWritableProblem(status) {
            throw KeyError(.writableByOthers, "\(path): \(problem); refusing to trust the key in it",
                           hint: "run: chmod go-w \(path)   (and check that the key in it is the one you meant to trust)")
        }
        if secret && status.st_mode & 0o077 != 0 {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw KeyError(.insecurePermissions, "\(path) is readable by others (mode \(mode)); refusing to use this secret key",
                           hint: "run: chmod 600 \(path)   (and make a new key if others may have read it)")
        }
        guard status.st_size <= maxSize else { throw KeyError(.badEncoding, "\(path) is too large to be a key file") }
        var buffer = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        // Wiped on every way out, errors included; the caller wipes the copy it gets.
        defer { secureZero(&buffer) }
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw KeyError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            total += n
        }
        guard total <= maxSize else { throw KeyError(.badEncoding, "\(path) is too large to be a key file") }
        return Array(buffer.prefix(total))
    }

    /// The one key line of a file: blank lines and `#` comments are skipped. A slice of
    /// `contents`, not a copy: a secret key's line is wiped with the caller's buffer.
    static func keyLine(in contents: [UInt8], path: String) throws(KeyError) -> ArraySlice<UInt8> {
        var found: ArraySlice<UInt8>?
        for rawLine in contents.split(separator: 0x0A, omittingEmptySubsequences: true) {
            let line = rawLine.trimmedASCIIWhitespace()
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard found == nil else { throw KeyError(.wrongKeyCount, "\(path) holds more than one key") }
            found = line
        }
        guard let found else { throw KeyError(.wrongKeyCount, "\(path) holds no key") }
        return found
    }
}
