#if canImport(Glibc)
import Glibc
#endif
import Durable
import Transfer
import Pipeline
import Synchronization

/// One incoming folder, built hidden in the output folder and moved into place whole.
///
/// `DirectoryFileStore.beginTree(topName:origin:)` creates a staging folder `.TOP.TAG-XXXXXX.blesend-part`
/// (`TemporaryNames`, mode 0700) next to where the folder will go, relative to the store's
/// descriptor on the output folder. Folders and files are created inside it, each
/// path walked one component at a time from the staging folder's descriptor (`openat` with
/// `O_NOFOLLOW`, `mkdirat`, `O_CREAT | O_EXCL`), so nothing is written outside it even if
/// something inside were a symlink. Every path is created at most once: a second entry that
/// reduced to the same path, a file where a folder is or a folder where a file is, gets `exists`.
/// `commit` gives the folders their mode (`FileModes.folder`, from the umask), flushes them and
/// renames the staging folder to the top name, or a numbered one if that is taken (`photos-1`),
/// never replacing anything, with `renameat2(RENAME_NOREPLACE)` on the held descriptor; before and
/// after, it checks by device and inode that the name is the folder it built. Nothing of the
/// peer's but the executable bit is applied: no owner, no times, no other mode bits.
///
/// Where the store keeps partials across runs (`keepPartials`), a journal beside the staging
/// folder (`TreeJournal`, `.TOP.TAG-XXXXXX.blesend-keep`) records what is settled in it, each
/// record synced after the folder entries it names, and a stop leaves both for the next run
/// (`closeForResume`, `TreeRecovery`); the journal goes once the folder is in place.
///
/// One caller at a time, under `serial`: the receiver's pump begins files and folders in it while
/// a connection's storage worker may be committing one of its files (`StorageWork`), and a second
/// connection of the same sender may take the folder over meanwhile. The lock is held across the
/// syncs of that one step; only callers of the same folder wait for it.
public final class DirectoryIncomingTree {
    private let serial = Mutex(())
    /// The name the folder is stored under if it is free (already sanitised, one component).
    public let topName: String
    private let directory: String
    private let modes: FileModes
    /// The output folder (a duplicate of the store's descriptor), and the staging folder in it
    /// (-1 once committed or discarded).
    private let outputFD: Int32
    private var stagingFD: Int32
    private let stagingName: String
    private var stagingToken: OpenTemporaries.Token?
    /// Folders created inside the staging folder, parents before children; and the paths of
    /// those that arrived as entries (the others were made on demand for a file).
    private var createdFolders: [[String]] = []
    private var createdFolderKeys: Set<[UInt8]> = []
    private var enteredFolderKeys: Set<[UInt8]> = []
    /// Files begun but neither committed nor discarded: the tree cannot be committed around them.
    private var openFiles = 0
    /// Where what was settled in it is recorded, when the store keeps partials across runs: then
    /// every folder made and every file's folder entry is synced before it is recorded. Past
    /// `store.maxKeptFolderPaths` paths it goes (`countPath`).
    private var journal: TreeJournal?
    /// Paths (folders and files) it holds, as its journal would count them.
    private var paths: Int
    /// The store it goes into: its reserve (`--reserve`) holds inside folders too.
    private let store: DirectoryFileStore

    /// The folder a store recovered at start (`TreeRecovery`): its staging folder `stagingName`
    /// open at `stagingFD`, its folders (all of them, and those that arrived as `folder` items)
    /// and `openFiles` files to resume.
    init(recovering stagingName: String, stagingFD: Int32, store: DirectoryFileStore, topName: String, journal: TreeJournal,
         folders: [[String]], entered: [[String]], openFiles: Int, paths: Int) throws(StorageError) {
        let outputFD = fcntl(store.directoryFD, F_DUPFD_CLOEXEC, 0)
        guard outputFD >= 0 else { throw StorageError(.io, "cannot hold \(store.directory): \(systemMessage(errno))") }
        self.store = store
        self.topName = topName
        self.directory = store.directory
        self.modes = store.modes
        self.outputFD = outputFD
        self.stagingFD = stagingFD
        self.stagingName = stagingName
        self.stagingToken = nil
        self.journal = journal
        self.paths = paths
        self.openFiles = openFiles
        for folder in folders { noteCreated(folder, key: Array(Self.text(folder).utf8)) }
        enteredFolderKeys = Set(entered.map { Array(Self.text($0).utf8) })
    }

    init(store: DirectoryFileStore, topName: String, head: TreeRecord) throws(StorageError) {
        guard isSafeComponent(topName) else { throw StorageError(.io, "unsafe folder name") }
        let directory = store.directory
        // A folder's size is not known at its offer: the reserve itself must be free.
        try checkFreeSpace(nil, for: topName + "/", in: directory, reserve: store.reserve) { store.fileSystemStatus(store.directoryFD, $0) }
        let outputFD = fcntl(store.directoryFD, F_DUPFD_CLOEXEC, 0)
        guard outputFD >= 0 else {
            throw StorageError(.io, "cannot hold \(directory): \(systemMessage(errno))")
        }
        var created: String?
        var lastError: Int32 = EEXIST
        for _ in 0..<100 where created == nil {
            let candidate = store.names.fresh(for: topName)
            if mkdirat(outputFD, candidate, 0o700) == 0 {
                created = candidate
            } else {
                lastError = errno
                if lastError != EEXIST { break }
            }
        }
        guard let stagingName = created else {
            close(outputFD)
            throw StorageError(lastError == ENOSPC ? .noSpace : .notWritable, "cannot create a folder in \(directory): \(systemMessage(lastError))")
        }
        let stagingFD = openat(outputFD, stagingName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard stagingFD >= 0 else {
            let code = errno
            removeEntry(named: Array(stagingName.utf8), in: outputFD)
            close(outputFD)
            throw StorageError(.io, "cannot open the folder just created in \(directory): \(systemMessage(code))")
        }
        // Kept across runs: recorded beside it, and left by an interrupt (not an open temporary).
        var journal: TreeJournal?
        if store.keepPartials != nil {
            do {
                journal = try TreeJournal.create(in: store, name: TemporaryNames.record(for: stagingName), head: head)
            } catch {
                close(stagingFD)
                removeEntry(named: Array(stagingName.utf8), in: outputFD)
                close(outputFD)
                throw error
            }
        }
        self.store = store
        self.topName = topName
        self.directory = directory
        self.modes = store.modes
        self.outputFD = outputFD
        self.stagingFD = stagingFD
        self.stagingName = stagingName
        self.journal = journal
        self.paths = 0
        self.stagingToken = journal == nil ? OpenTemporaries.shared.insert(stagingName, in: outputFD) : nil
    }

    deinit {
        discard()
        close(outputFD)
    }

    /// Creates the folder at `components` (relative to the top folder; empty means the top folder
    /// itself, which exists already), and any missing folder above it.
    public func makeFolder(_ components: [String], id: TransferID) throws(StorageError) {
        try serially { () throws(StorageError) in try makeFolderAlone(components, id: id) }
    }

    private func makeFolderAlone(_ components: [String], id: TransferID) throws(StorageError) {
        guard let name = components.last else { return }
        let key = try Self.key(components)
        guard !enteredFolderKeys.contains(key) else { throw StorageError(.exists, "\(Self.text(components)) arrived twice") }
        let parent = try openFolder(components.dropLast())
        defer { close(parent) }
        if mkdirat(parent, name, 0o700) == 0 {
            noteCreated(components, key: key)
            try syncEntries(parent, Self.text(components))
        } else {
            let code = errno
            guard code == EEXIST else { throw Self.creationError(code, Self.text(components)) }
            // Made on demand for a file that came first is fine; anything else is in the way.
            var status = stat()
            guard createdFolderKeys.contains(key), fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
                  (status.st_mode & S_IFMT) == S_IFDIR else {
                throw StorageError(.exists, "\(Self.text(components)) is already taken")
            }
        }
        try journal?.append(.folder(id: id, path: components))
        enteredFolderKeys.insert(key)
        countPath()
    }

    /// Creates the file at `components` (relative to the top folder), and any missing folder above
    /// it. Its `commit` finishes it in place (flushed, `FileModes.file`, or `.executable` when
    /// `executable`) and returns its path relative to the top folder; it becomes visible only with the tree's `commit`.
    public func beginFile(_ components: [String], id: TransferID, size: UInt64?, executable: Bool) throws(StorageError) -> any IncomingFile {
        let (parent, fd) = try serially { () throws(StorageError) in try createFile(components, size: size) }
        return TreeIncomingFile(tree: self, parent: parent, fd: fd, id: id, components: components, executable: executable)
    }

    /// Creates the file (`beginFile`); returns its folder's descriptor and its own.
    private func createFile(_ components: [String], size: UInt64?) throws(StorageError) -> (parent: Int32, fd: Int32) {
        guard let name = components.last else { throw StorageError(.io, "a file needs a name") }
        _ = try Self.key(components)
        guard stagingFD >= 0 else { throw StorageError(.io, "the folder was already committed or discarded") }
        let path = Self.text(components)
        try checkFreeSpace(size, for: path, in: directory, reserve: store.reserve) { store.fileSystemStatus(stagingFD, $0) }
        let parent = try openFolder(components.dropLast())
        let fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            close(parent)
            throw Self.creationError(code, path)
        }
        openFiles += 1
        countPath()
        return (parent, fd)
    }

    /// `body`, with the folder to itself.
    private func serially<R: Sendable>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R {
        try serial.withLock { _ throws(StorageError) in try body() }
    }

    /// Whether what is settled in it is recorded for a later run.
    var keepsAcrossRuns: Bool { serial.withLock { _ in journal != nil } }

    /// Counts one more path; past `store.maxKeptFolderPaths` the folder is received on but no
    /// longer kept across runs (no start would read a journal that long: `TreeJournal.maxPaths`).
    /// Its journal goes, and a stop removes the staging folder like any open temporary.
    private func countPath() {
        paths += 1
        guard paths > store.maxKeptFolderPaths, let journal else { return }
        journal.remove()
        try? store.syncFolder()
        self.journal = nil
        stagingToken = OpenTemporaries.shared.insert(stagingName, in: outputFD)
    }

    /// Counts bytes written to a file of the folder against the store's reserve (`--reserve`).
    func checkReserve(afterWriting count: Int, to path: String) throws(StorageError) {
        try store.checkReserve(afterWriting: count, to: topName + "/" + path)
    }

    /// A file of it settled up to `record` (a checkpoint, or its end), its data synced: where the
    /// folder is kept across runs, the file's folder entry (in `parent`) is synced, then `record`
    /// is written down.
    func settle(_ record: TreeRecord, entryIn parent: Int32, _ path: String) throws(StorageError) {
        try serially { () throws(StorageError) in
            try syncEntries(parent, path)
            try journal?.append(record)
        }
    }

    /// The mode a file gets when it is finished.
    func fileMode(executable: Bool) -> mode_t { executable ? modes.executable : modes.file }

    /// Moves the whole folder into place; returns the name it got (`topName`, or numbered).
    public func commit() throws(StorageError) -> String {
        try serially { () throws(StorageError) in try commitAlone() }
    }

    private func commitAlone() throws(StorageError) -> String {
        guard stagingFD >= 0 else { throw StorageError(.io, "the folder was already committed or discarded") }
        guard openFiles == 0 else { throw StorageError(.io, "\(topName) still has files being received") }
        // Children before parents, so each folder is flushed after what it holds.
        for folder in createdFolders.reversed() {
            let fd = try openFolder(folder[...], creating: false)
            defer { close(fd) }
            try Self.finish(folder: fd, Self.text(folder), mode: modes.folder)
        }
        try Self.finish(folder: stagingFD, topName, mode: modes.folder)
        guard entry(stagingName, in: outputFD, isFile: stagingFD) else { throw swapped() }
        let stored = try DirectoryFileStore.firstFreeName(for: topName) { candidate throws(StorageError) in
            try moveFolderWithoutReplacing(stagingName, to: candidate, in: outputFD)
        }
        // Someone who swapped the staging name between the check and the rename made us move
        // what they put there into place: that name is taken back if it is a file, a symlink or an
        // empty folder; a folder with things in it is left, and the error says what happened.
        guard entry(stored, in: outputFD, isFile: stagingFD) else {
            if unlinkat(outputFD, stored, 0) != 0 { unlinkat(outputFD, stored, AT_REMOVEDIR) }
            throw swapped()
        }
        // The rename itself is durable once the output folder is flushed; the tree is in place
        // whether or not that succeeds.
        fsync(outputFD)
        close(stagingFD)
        stagingFD = -1
        OpenTemporaries.shared.remove(stagingToken)
        // After the rename: a crash in between leaves a journal without its folder, which the
        // next start removes; the other order could lose the whole folder.
        if let journal {
            journal.remove()
            fsync(outputFD)
        }
        return stored
    }

    private func swapped() -> StorageError {
        StorageError(.io, "the staging folder of \(topName) was replaced by someone else in \(directory); nothing was stored")
    }

    /// Removes the staging folder and everything in it. Safe to call more than once, and after a
    /// failed `commit`; does nothing after a successful one.
    public func discard() {
        serial.withLock { _ in discardAlone() }
    }

    private func discardAlone() {
        guard stagingFD >= 0 else { return }
        close(stagingFD)
        stagingFD = -1
        removeEntry(named: Array(stagingName.utf8), in: outputFD)
        journal?.remove()
        OpenTemporaries.shared.remove(stagingToken)
    }

    /// Kept across runs: closed and left as it is for the next run (after its files'
    /// `closeForResume`); otherwise removed.
    public func closeForResume() {
        serial.withLock { _ in
            guard let journal else { return discardAlone() }
            guard stagingFD >= 0 else { return }
            close(stagingFD)
            stagingFD = -1
            journal.close()
        }
    }

    func fileEnded() { serial.withLock { _ in openFiles -= 1 } }

    /// Opens the folder at `components` below the staging folder, one component at a time with
    /// `O_NOFOLLOW`, creating missing ones when `creating`. The caller closes the result.
    private func openFolder(_ components: ArraySlice<String>, creating: Bool = true) throws(StorageError) -> Int32 {
        guard stagingFD >= 0 else { throw StorageError(.io, "the folder was already committed or discarded") }
        var current = openat(stagingFD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw StorageError(.io, "cannot open the staging folder: \(systemMessage(errno))") }
        for (index, name) in zip(components.indices, components) {
            let path = Array(components[...index])
            if creating, mkdirat(current, name, 0o700) == 0 {
                noteCreated(path, key: try Self.key(path))
                do throws(StorageError) {
                    try syncEntries(current, Self.text(path))
                } catch {
                    close(current)
                    throw error
                }
            } else if creating, errno != EEXIST {
                let code = errno
                close(current)
                throw Self.creationError(code, Self.text(path))
            }
            let next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            close(current)
            guard next >= 0 else {
                // ENOTDIR: a file is there; ELOOP: a symlink is there, and is not followed.
                if code == ENOTDIR || code == ELOOP {
                    throw StorageError(.exists, "\(Self.text(path)) is already taken by something that is not a folder")
                }
                throw StorageError(.io, "cannot open \(Self.text(path)): \(systemMessage(code))")
            }
            current = next
        }
        return current
    }

    /// Kept across runs: syncs the folder `fd`, so that an entry just made in it (`made`) outlives
    /// a power cut before anything that depends on it is recorded.
    private func syncEntries(_ fd: Int32, _ made: String) throws(StorageError) {
        guard journal != nil else { return }
        guard fsync(fd) == 0 else { throw StorageError(.io, "cannot sync the folder of \(made): \(systemMessage(errno))") }
    }

    private func noteCreated(_ components: [String], key: [UInt8]) {
        createdFolders.append(components)
        createdFolderKeys.insert(key)
    }

    /// Final folder mode, then flush.
    private static func finish(folder fd: Int32, _ path: String, mode: mode_t) throws(StorageError) {
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            throw StorageError(.io, "cannot finish \(path): \(systemMessage(errno))")
        }
    }

    /// The path's bytes as a set key (`String` equality would merge NFC and NFD spellings, which
    /// are two names on disk). Checks every component first.
    private static func key(_ components: [String]) throws(StorageError) -> [UInt8] {
        guard components.count <= TransferConstants.maxPathDepth, components.allSatisfy(isSafeComponent) else {
            throw StorageError(.io, "unsafe path")
        }
        return Array(text(components).utf8)
    }

    static func text(_ components: some Collection<String>) -> String {
        components.joined(separator: "/")
    }

    private static func creationError(_ code: Int32, _ path: String) -> StorageError {
        switch code {
        case EEXIST: StorageError(.exists, "\(path) arrived twice, or a folder of that name is there")
        case ENOSPC, EDQUOT: StorageError(.noSpace, "cannot create \(path): \(systemMessage(code))")
        default: StorageError(.io, "cannot create \(path): \(systemMessage(code))")
        }
    }
}

extension DirectoryFileStore: TreeStore {
    /// Starts receiving a folder to be stored as `topName` (already sanitised) in this directory.
    /// Folders are never replaced, not even with `overwrite`: a taken name gets a number.
    public func beginTree(topName: String, origin: TreeOrigin) throws(StorageError) -> DirectoryIncomingTree {
        try DirectoryIncomingTree(store: self, topName: topName, head: .head(origin, name: topName))
    }

    public func beginTree(named topName: String, origin: TreeOrigin) throws -> any IncomingTree {
        try beginTree(topName: topName, origin: origin)
    }
}

extension DirectoryIncomingTree: IncomingTree {}
