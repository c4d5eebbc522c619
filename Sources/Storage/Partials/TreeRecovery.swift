#if canImport(Glibc)
import Glibc
#endif
import Durable
import Transfer

/// What a receiver finds of its folders at start (`DirectoryFileStore.recoverTrees`): each staging
/// folder whose journal (`TreeJournal`) reads, is not older than `lifetime` and agrees with what
/// is on disk is taken up where it was: its made folders and finished files are kept as settled,
/// its files part-way resume from their last checkpoint (the prefix hashed again, anything past
/// it cut), and every other file in it, begun but never checkpointed, is removed. A folder whose
/// disk disagrees with its journal (a finished file or a made folder missing or of another size,
/// something that is neither a folder nor a file) is removed whole, journal too, and so is a
/// journal without its folder (a crash between a commit's rename and the journal's removal).
struct TreeRecovery {
    let store: DirectoryFileStore
    /// Seconds a folder is kept after its journal's last record.
    let lifetime: UInt64
    let makeHasher: () -> any ContentHasher

    /// The folders found; `removed` counts the folders removed.
    func run() -> Recovered<RecoveredTree> {
        var outcome = Recovered<RecoveredTree>()
        let now = store.secondsSinceEpoch()
        let expiry = Expiry(lifetime: lifetime, now: now)
        for record in store.ownNames() {
            guard let staging = TemporaryNames.data(forRecord: record),
                  (try? store.read(record, at: 0, count: TreeJournal.magic.count)) == TreeJournal.magic else {
                store.closeFile(record)
                continue
            }
            // Expiry from the file's time first: an old journal is removed unread, whatever its size.
            if !expiry.passed(store.modificationTime(record)),
               let parsed = try? TreeJournal.read(in: store, name: record),
               !expiry.passed(parsed.contents.savedAt),
               let tree = recover(staging: staging, journal: parsed.journal, contents: parsed.contents, expiry: expiry) {
                outcome.found.append(tree)
            } else {
                store.remove(staging)
                store.remove(record)
                outcome.removed += 1
            }
        }
        if outcome.removed > 0 { try? store.syncFolder() }
        return outcome
    }

    /// A file found in the staging folder that its journal says is part-way, checked.
    private struct Resumable {
        let parent: Int32
        let fd: Int32
        let id: TransferID
        let components: [String]
        let executable: Bool
        let checkpoint: PartialCheckpoint
        let hasher: any ContentHasher
    }

    private func recover(staging: String, journal: TreeJournal, contents: TreeJournalContents, expiry: Expiry) -> RecoveredTree? {
        let origin = contents.origin, topName = contents.name, senderKey = origin.senderKey
        let entered = contents.folders
        let finished = contents.finished.mapValues { (id: $0.id, size: $0.size) }
        let partway = contents.partway
        // The latest word on each path only, and no time in the future: what the next start reads.
        if contents.records > 1 + contents.paths || contents.savedAt > expiry.now {
            guard (try? journal.compact(contents, now: expiry.now)) != nil else { return nil }
        }
        let stagingFD = store.openFolder(named: staging)
        guard stagingFD >= 0 else { return nil }
        var walk = Walk(recovery: self, senderKey: senderKey, topName: topName, finished: finished, partway: partway)
        let intact = walk.visit(stagingFD, below: [])
        let seen = Set(walk.folders.map { DirectoryIncomingTree.text($0) })
        guard intact, finished.keys.allSatisfy(walk.files.contains), entered.keys.allSatisfy(seen.contains),
              let tree = try? DirectoryIncomingTree(recovering: staging, stagingFD: stagingFD, store: store, topName: topName,
                                                    journal: journal, folders: walk.folders,
                                                    entered: entered.values.map(\.path), openFiles: walk.resumable.count,
                                                    paths: contents.paths)
        else {
            for file in walk.resumable { close(file.fd); close(file.parent) }
            close(stagingFD)
            return nil
        }
        let age = expiry.age(of: contents.savedAt)
        let partials = walk.resumable.map { file in
            RecoveredPartial(checkpoint: file.checkpoint,
                             file: TreeIncomingFile(tree: tree, parent: file.parent, fd: file.fd, id: file.id,
                                                    components: file.components, executable: file.executable),
                             hasher: file.hasher, age: age)
        }
        journal.close()
        return RecoveredTree(origin: origin, name: topName, tree: tree,
                             folders: entered.values.map { ($0.id, $0.path.last ?? topName) },
                             files: finished.map { ($0.value.id, $0.key, $0.value.size) }, partials: partials, age: age)
    }

    /// One pass over a staging folder: its folders, its finished files checked, its files part-way
    /// opened and checked, the rest removed.
    private struct Walk {
        let recovery: TreeRecovery
        let senderKey: [UInt8]
        let topName: String
        let finished: [String: (id: TransferID, size: UInt64)]
        let partway: [String: TreeRecord]
        var folders: [[String]] = []
        var files: Set<String> = []
        var resumable: [Resumable] = []

        /// Visits the folder open at `fd` (`below` the top folder; closed here, unless resumable
        /// files keep a duplicate); false when it holds what the journal cannot explain.
        mutating func visit(_ fd: Int32, below: [String]) -> Bool {
            guard below.count < TransferConstants.maxPathDepth, let names = directoryEntryNames(fd) else { return false }
            for raw in names {
                guard let name = String(validating: raw, as: UTF8.self), isSafeComponent(name) else { return false }
                let path = below + [name]
                let key = DirectoryIncomingTree.text(path)
                var status = stat()
                guard fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    guard child >= 0 else { return false }
                    folders.append(path)
                    let intact = visit(child, below: path)
                    close(child)
                    guard intact else { return false }
                case S_IFREG:
                    if let done = finished[key] {
                        guard UInt64(status.st_size) == done.size else { return false }
                        files.insert(key)
                    } else if let record = partway[key], let file = recovery.resume(record, named: name, in: fd,
                                                                                      senderKey: senderKey, topName: topName) {
                        resumable.append(file)
                    } else {
                        unlinkat(fd, name, 0)
                    }
                default:
                    return false
                }
            }
            return true
        }
    }

    /// The file `name` in the folder open at `folder`, checked against its checkpoint `record`:
    /// long enough, its prefix hashing as recorded (and cut back to it); nil (the caller removes
    /// it, and the sender's re-offer starts it afresh) otherwise.
    private func resume(_ record: TreeRecord, named name: String, in folder: Int32, senderKey: [UInt8], topName: String) -> Resumable? {
        guard case .checkpoint(let id, let path, let size, let executable, let durable, let prefixHash) = record else { return nil }
        let fd = openat(folder, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        var hasher = makeHasher()
        var offset: UInt64 = 0
        var intact = fstat(fd, &status) == 0 && UInt64(status.st_size) >= durable
        var buffer = [UInt8](repeating: 0, count: PartialRecovery.readSize)
        while intact, offset < durable {
            let count = Int(min(UInt64(buffer.count), durable - offset))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            intact = n == count
            if intact { hasher.update(Array(buffer[..<count])) }
            offset += UInt64(count)
        }
        var prefix = hasher
        intact = intact && prefix.finalize() == prefixHash
            && (UInt64(status.st_size) == durable || (ftruncate(fd, off_t(durable)) == 0 && fdatasync(fd) == 0))
        let parent = intact ? fcntl(folder, F_DUPFD_CLOEXEC, 0) : -1
        guard parent >= 0 else {
            close(fd)
            return nil
        }
        let checkpoint = PartialCheckpoint(senderKey: senderKey, id: id, name: topName + "/" + DirectoryIncomingTree.text(path),
                                           size: size, durable: durable, prefixHash: prefixHash)
        return Resumable(parent: parent, fd: fd, id: id, components: path, executable: executable, checkpoint: checkpoint, hasher: hasher)
    }
}

extension DirectoryFileStore {
    /// The folders an earlier run kept (`keepPartials`), checked (`TreeRecovery`).
    public func recoverTrees(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredTree> {
        guard let keepPartials else { return Recovered() }
        return withoutActuallyEscaping(makeHasher) { makeHasher in
            TreeRecovery(store: self, lifetime: UInt64(keepPartials.components.seconds), makeHasher: makeHasher).run()
        }
    }

    /// The folder `name` in the output folder, opened without following a symlink if it is this
    /// user's; -1 otherwise.
    func openFolder(named name: String) -> Int32 {
        let fd = openat(directoryFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var status = stat()
        guard fd >= 0 else { return -1 }
        guard fstat(fd, &status) == 0, status.st_uid == geteuid() else {
            close(fd)
            return -1
        }
        return fd
    }
}
