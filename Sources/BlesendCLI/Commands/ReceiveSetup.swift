#if canImport(Glibc)
import Glibc
#endif
import Keys

/// What `blerecv` prepares on disk before it advertises: its trust directory and its output folder.
enum ReceiveSetup {
    /// Reads the trust directory. With `asking` (--ask) a missing one is made first, mode 0700:
    /// first contact fills it. Without, it must hold at least one key.
    static func trustDirectory(_ directory: NamedKeyDirectory, asking: Bool, reporter: Reporter) throws(CLIError) -> TrustDirectory {
        do {
            if asking, try directory.createIfMissing(mode: 0o700) {
                reporter.say("blerecv: made the trust directory \(directory.path) (mode 0700); senders you accept are added to it")
            }
            let trusted = try TrustDirectory(path: directory.path)
            guard !trusted.store.peers.isEmpty || asking else {
                throw CLIError(.keyProblem, "no trusted senders in \(directory.path) (no *.pub files)",
                               hint: "add one with: \(directory.command("add <their key or .pub> --name NAME")), or run blerecv --ask")
            }
            return trusted
        } catch let error as CLIError {
            throw error
        } catch let error as KeyError where error.code == .trustDirectory && !asking {
            var status = stat()
            guard stat(directory.path, &status) != 0 else { throw CLIError(error) }
            throw CLIError(.keyProblem, "the trust directory \(directory.path) does not exist",
                           hint: "add a sender with: \(directory.command("add <their key or .pub> --name NAME")), or run blerecv --ask")
        } catch {
            throw CLIError(error)
        }
    }

    /// Makes the output folder, mode 0700, when it is missing and its parent exists; when the
    /// parent is missing too, refuses (exit 71) with the `mkdir -p` to run. An existing path is
    /// left to `DirectoryFileStore`'s checks. Returns whether it made the folder.
    @discardableResult
    static func outputFolder(_ path: String, reporter: Reporter? = nil) throws(CLIError) -> Bool {
        var status = stat()
        if lstat(path, &status) == 0 { return false }
        guard errno == ENOENT else {
            throw CLIError(.localIO, "cannot check the output folder \(path): \(String(cString: strerror(errno)))")
        }
        let parent = parentFolder(path)
        guard stat(parent, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw CLIError(.localIO, "the output folder \(path) does not exist, nor does its parent folder \(parent)",
                           hint: "make it with: mkdir -p \(KeyDirectoryLocation.shellWord(path))   (or pick another with --out)")
        }
        guard mkdir(path, 0o700) == 0 else {
            throw CLIError(.localIO, "cannot make the output folder \(path): \(String(cString: strerror(errno)))",
                           hint: "pick another with --out")
        }
        // The umask may have taken bits; exactly 0700.
        chmod(path, 0o700)
        reporter?.say("blerecv: made the output folder \(path) (mode 0700)")
        return true
    }

    /// The folder `path` is in ("." for a bare name), trailing slashes ignored.
    static func parentFolder(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
