#if canImport(Glibc)
import Glibc
#endif
import CFileCalls
import Durable
import Transfer
import Pipeline
import Synchronization

/// Stores incoming files in a directory.
///
/// The store holds a descriptor on the output folder from the start (`O_DIRECTORY | O_NOFOLLOW`)
/// and does everything relative to it, so a folder renamed or replaced under its path later
/// changes nothing. Each file is written to a file with no name in that folder
/// (`openat(dir, ".", O_TMPFILE)`, mode 0600 until it is committed) and is given its name only by
/// `commit`, by its descriptor (`linkDescriptor`): there is no temporary name that anyone who can
/// write the folder could swap between the flush and the commit. An existing file is never
/// replaced unless `overwrite` is set: a taken name gets a number (`report-1.pdf`). A file that is
/// part-way when its link drops stays open, nameless, in the transfer layer's partials, and resumes
/// from there; if the process ends, the kernel frees it.
///
/// Where the file system has no `O_TMPFILE`, a file is written to a hidden temporary
/// (`TemporaryNames`) made with `O_EXCL | O_NOFOLLOW` relative to the folder's descriptor, and
/// `commit` checks by device and inode, before and after linking it into place, that the name
/// still leads to the file it wrote. Stored files get `modes` (from the receiver's umask).
public final class DirectoryFileStore: FileStore {
    public static let temporarySuffix = TemporaryNames.suffix

    public let directory: String
    public let overwrite: Bool
    public let modes: FileModes
    let names: TemporaryNames
    /// The output folder, held for the store's life.
    let directoryFD: Int32
    /// Whether to try `O_TMPFILE`; cleared the first time the file system refuses it. Tests clear
    /// it to run the named fallback.
    var unnamedFiles = true
    /// How long a partial file is kept across runs (`recoverPartials`); nil: partial files live
    /// only as long as the process, with no name (the kernel frees them when it ends).
    public let keepPartials: Duration?
    /// What is kept free on the folder's file system (`checkFreeSpace`, `checkReserve`).
    public var reserve = DiskReserve(bytes: 0)
    /// Paths a folder may hold and still be kept across runs (`DirectoryIncomingTree.countPath`).
    var maxKeptFolderPaths = TreeJournal.maxPaths
    /// Reads the folder's file system status (`fstatvfs`); tests swap it.
    var fileSystemStatus: (Int32, UnsafeMutablePointer<statvfs>) -> Int32 = { fstatvfs($0, $1) }
    /// Bytes written since the reserve was last checked.
    private var writtenSinceCheck = 0
    /// The reserve is looked at again after this many bytes written.
    static let reserveCheckInterval = 1 << 20
    /// The partial files kept across runs (`PartialFolder`), under a lock: the receiver's pump
    /// writes one connection's partials while another connection's storage worker commits its
    /// own (`StorageWork`). The lock is held for the tables only, never across a sync.
    let partialHandles = Mutex(PartialHandles())
    /// Descriptors of the partial files kept across runs, by name (a copy, for tests).
    var partialDescriptors: [String: Int32] { partialHandles.withLock { $0.descriptors } }
    /// The first way of linking a nameless file (`linkDescriptor`); tests swap it.
    var linkByEmptyPath: (Int32, Int32, String) -> Int32 = { blesend_link_descriptor($0, $1, $2) }

    /// Opens `directory`. `temporaryTag` names this receiver's temporaries (see `TemporaryNames`:
    /// 1 to 32 lowercase letters and digits); `modes` come from its umask. With `keepPartials`,
    /// files are received into hidden temporaries with checkpoint records beside them
    /// (`DurableIncomingFile`), and a later run resumes them for that long after their last
    /// checkpoint (`recoverPartials`).
    public init(directory: String, overwrite: Bool = false, modes: FileModes, temporaryTag: String,
                keepPartials: Duration? = nil) throws(StorageError) {
        guard TemporaryNames.isValidTag(temporaryTag) else { throw StorageError(.io, "unusable temporary tag \(temporaryTag)") }
        let path = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            // With O_DIRECTORY, a symlink fails as ENOTDIR rather than ELOOP.
            var status = stat()
            let symlink = lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
            switch code {
            case ENOTDIR where !symlink: throw StorageError(.notWritable, "\(path) is not a directory")
            case ENOTDIR, ELOOP: throw StorageError(.notWritable, "\(path) is a symlink; give the folder it leads to (blerecv holds the folder itself, not a link to it)")
            default: throw StorageError(.notWritable, "cannot open \(path): \(systemMessage(code))")
            }
        }
        self.directory = path
        self.overwrite = overwrite
        self.modes = modes
        self.names = TemporaryNames(tag: temporaryTag)
        self.directoryFD = fd
        self.keepPartials = keepPartials
    }

    deinit {
        for fd in partialHandles.withLock({ $0.descriptors.values }) { Glibc.close(fd) }
        Glibc.close(directoryFD)
    }

    /// Checks that the directory is writable, so a receiver fails at start, not mid-file.
    public func checkWritable() throws(StorageError) {
        guard faccessat(directoryFD, ".", W_OK | X_OK, 0) == 0 else {
            throw StorageError(.notWritable, "\(directory) is not writable: \(systemMessage(errno))")
        }
    }

    /// Refuses a folder other users could tamper with (`folderWriteProblem`).
    public func checkOnlyOwnerWrites(euid: uid_t = geteuid()) throws(OutputFolderError) {
        var status = stat()
        guard fstat(directoryFD, &status) == 0 else { return }
        if let problem = folderWriteProblem(status, euid: euid) {
            throw OutputFolderError(.writableByOthers, path: directory, mode: UInt32(status.st_mode & 0o7777),
                                    "\(directory): \(problem)")
        }
    }

    /// Removes the temporary files and staging folders (`DirectoryIncomingTree`) that this
    /// receiver (its `temporaryTag`) left when it did not exit cleanly, and that belong to this
    /// user; anybody else's, and names of any other scheme, are left alone. Folders are removed
    /// recursively without following symlinks (`removeEntry`). Returns how many were removed.
    @discardableResult
    public func removeStaleTemporaries() -> Int {
        var removed = 0
        let euid = geteuid()
        for name in directoryEntryNames(directoryFD) ?? [] where names.isOurs(name) {
            var status = stat()
            let owned = withCName(name) { fstatat(directoryFD, $0, &status, AT_SYMLINK_NOFOLLOW) } == 0 && status.st_uid == euid
            if owned, removeEntry(named: name, in: directoryFD) { removed += 1 }
        }
        return removed
    }

    public func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        guard isSafeComponent(name) else { throw StorageError(.io, "unsafe file name") }
        try checkFreeSpace(size, for: name, in: directory, reserve: reserve) { fileSystemStatus(directoryFD, $0) }
        if keepPartials != nil { return try beginDurable(name: name) }
        if unnamedFiles {
            let fd = blesend_open_unnamed(directoryFD, 0o600)
            if fd >= 0 { return DirectoryIncomingFile(store: self, fd: fd, temporary: nil, name: name) }
            let code = errno
            guard code == EOPNOTSUPP || code == EISDIR || code == EINVAL else { throw Self.creationError(code, directory) }
            unnamedFiles = false
        }
        for _ in 0..<100 {
            let temporary = names.fresh(for: name)
            let fd = openat(directoryFD, temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                let token = OpenTemporaries.shared.insert(temporary, in: directoryFD)
                return DirectoryIncomingFile(store: self, fd: fd, temporary: (temporary, token), name: name)
            }
            guard errno == EEXIST else { throw Self.creationError(errno, directory) }
        }
        throw StorageError(.io, "cannot find a free temporary name in \(directory)")
    }

    private func beginDurable(name: String) throws(StorageError) -> any IncomingFile {
        for _ in 0..<100 {
            let temporary = names.fresh(for: name)
            do {
                try create(temporary)
                return DurableIncomingFile(folder: self, data: temporary, name: name)
            } catch where error.code == .exists {
                continue
            }
        }
        throw StorageError(.io, "cannot find a free temporary name in \(directory)")
    }

    /// The partial files an earlier run kept (`keepPartials`), checked; every other temporary of
    /// this receiver's is removed (`PartialRecovery`).
    public func recoverPartials(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredPartial> {
        guard let keepPartials else { return Recovered() }
        return withoutActuallyEscaping(makeHasher) { makeHasher in
            PartialRecovery(folder: self, lifetime: UInt64(keepPartials.components.seconds), makeHasher: makeHasher).run()
        }
    }

    /// Counts `count` bytes written to a file of `name`; every `reserveCheckInterval` bytes,
    /// throws `noSpace` once the file system has no more than the reserve free.
    func checkReserve(afterWriting count: Int, to name: String) throws(StorageError) {
        writtenSinceCheck += count
        guard writtenSinceCheck >= Self.reserveCheckInterval else { return }
        writtenSinceCheck = 0
        try checkFreeSpace(nil, for: name, in: directory, reserve: reserve) { fileSystemStatus(directoryFD, $0) }
    }

    static func creationError(_ code: Int32, _ directory: String) -> StorageError {
        StorageError(code == ENOSPC || code == EDQUOT ? .noSpace : .notWritable,
                     "cannot create a file in \(directory): \(systemMessage(code))")
    }

    /// Gives the flushed file open at `fd` (nameless, or named `temporary`) its name: `name`, or a
    /// numbered one; returns the name used. Every step is relative to the folder's descriptor, and
    /// what ends up under the name is checked to be the file at `fd`.
    func place(_ fd: Int32, temporary: String?, as name: String) throws(StorageError) -> String {
        if let temporary, !entry(temporary, in: directoryFD, isFile: fd) {
            throw swapped(name)
        }
        if overwrite {
            // rename replaces; a nameless file first gets a fresh hidden name of its own.
            let from: String
            if let temporary { from = temporary } else { from = try linkToFreshName(fd, for: name) }
            guard renameat(directoryFD, from, directoryFD, name) == 0 else {
                let code = errno
                if temporary == nil { unlinkat(directoryFD, from, 0) }
                throw StorageError(.io, "cannot rename into \(name): \(systemMessage(code))")
            }
            try confirm(name, is: fd)
            return name
        }
        let stored = try Self.firstFreeName(for: name) { candidate throws(StorageError) in
            let linked = temporary.map { linkat(directoryFD, $0, directoryFD, candidate, 0) }
                ?? linkDescriptor(fd, into: directoryFD, as: candidate, emptyPath: linkByEmptyPath)
            // link fails with EEXIST instead of replacing: no file is ever overwritten.
            if linked == 0 { return true }
            guard errno == EEXIST else {
                throw StorageError(.io, "cannot move \(name) into place: \(systemMessage(errno))")
            }
            return false
        }
        try confirm(stored, is: fd)
        if let temporary { unlinkat(directoryFD, temporary, 0) }
        return stored
    }

    /// A fresh hidden name for the nameless file at `fd` (for `overwrite`'s rename).
    private func linkToFreshName(_ fd: Int32, for name: String) throws(StorageError) -> String {
        for _ in 0..<100 {
            let hidden = names.fresh(for: name)
            if linkDescriptor(fd, into: directoryFD, as: hidden, emptyPath: linkByEmptyPath) == 0 { return hidden }
            guard errno == EEXIST else { throw StorageError(.io, "cannot move \(name) into place: \(systemMessage(errno))") }
        }
        throw StorageError(.io, "cannot find a free temporary name in \(directory)")
    }

    /// Checks that `name` is the file at `fd`; if someone swapped in another file on the way, that
    /// name is removed again (only the link just made: the other file is not ours to keep there).
    private func confirm(_ name: String, is fd: Int32) throws(StorageError) {
        guard entry(name, in: directoryFD, isFile: fd) else {
            unlinkat(directoryFD, name, 0)
            throw swapped(name)
        }
    }

    private func swapped(_ name: String) -> StorageError {
        StorageError(.io, "the temporary file of \(name) was replaced by someone else in \(directory); nothing was stored")
    }

    /// Highest number a taken name gets (`report-9999.pdf`) before storing fails with `exists`.
    static let maxNumber = 9_999

    /// Offers `name`, then `name-1`, `name-2`, … (`numbered`) to `place`, which returns `false`
    /// when that name is taken; returns the first name `place` accepted.
    static func firstFreeName(
        for name: String, _ place: (String) throws(StorageError) -> Bool
    ) throws(StorageError) -> String {
        for attempt in 0...maxNumber {
            let candidate = attempt == 0 ? name : numbered(name, attempt)
            if try place(candidate) { return candidate }
        }
        throw StorageError(.exists, "too many entries named like \(name)")
    }

    /// Longest file name most Linux file systems take (NAME_MAX), in bytes.
    static let maxNameBytes = Durable.maxNameBytes

    /// `report.pdf` → `report-1.pdf`; `archive` → `archive-1`. The stem is shortened (at a
    /// character boundary) so the result stays within `maxNameBytes`.
    static func numbered(_ name: String, _ n: Int) -> String {
        let suffix = "-\(n)"
        var stem = Substring(name), ext = Substring("")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            stem = name[..<dot]
            ext = name[dot...]
        }
        if stem.utf8.count + suffix.utf8.count + ext.utf8.count > maxNameBytes {
            // An extension too long to keep is treated as part of the stem.
            if ext.utf8.count + suffix.utf8.count >= maxNameBytes / 2 {
                stem = Substring(name)
                ext = ""
            }
            while stem.utf8.count + suffix.utf8.count + ext.utf8.count > maxNameBytes { stem.removeLast() }
        }
        return "\(stem)\(suffix)\(ext)"
    }
}

/// The descriptors of the partial files kept across runs, by name, and the file each name stood
/// for when the store first opened it (device, inode): a reopen that finds another file there
/// (two waiting partials swapped by name) is refused.
struct PartialHandles {
    var descriptors: [String: Int32] = [:]
    var identities: [String: FileIdentity] = [:]
}
