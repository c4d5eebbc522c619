import Pipeline

/// What a receiver keeps beyond one connection, shared by every connection it serves at the same
/// time: partial files waiting for a resume, open folders, the transfers it completed (to answer a
/// sender whose `confirm` was lost), and where files and folders go.
///
/// A reference, because several `TransferReceiver`s (one per connection) use it at once; each
/// keeps only its own connection's state (phase, chunk history, grant, sender) and reaches these
/// tables through it. Entries are keyed by the authenticated sender key, so connections of
/// different senders never meet here; what one connection is using carries it as a holder
/// (`LedgerHolder`), and another connection's expiry, eviction or abandonment passes it by.
///
/// Confined to one thread, the receiver's pump: it is not `Sendable` and takes no lock. Every
/// connection sharing it must be driven from that one thread.
public final class ReceiverLedger {
    let store: any FileStore
    /// Where folders are built; without it, no folder is taken (`folders` is not granted).
    let trees: (any TreeStore)?
    let makeHasher: () -> any ContentHasher
    let maxFileSize: UInt64
    var partials: PartialTransfers
    var completedFiles = CompletedTransfers()
    /// Files and folders with storage work out on a connection's worker (`StorageWork`), by
    /// (sender, id). A file being committed (with its size) is out of `partials` and not yet in
    /// `completedFiles`: a re-offer of it meanwhile is answered as completed, and its `done` waits
    /// for the outcome. A file being checkpointed stays in `partials`, held: a connection that
    /// takes it over waits for the outcome before it writes. A folder item or a sent folder's
    /// `commit` sent again meanwhile waits for the outcome too.
    var itemsOut: [PartialTransfers.Key: ItemWorkOut] = [:]

    enum ItemWorkOut: Equatable {
        case commit(size: UInt64)
        case checkpoint
        case folder
    }
    /// Where completed transfers are kept across restarts (nil: in memory only).
    let completedMemory: (any CompletedMemory)?
    var folders: OpenFolders
    var completedFolders = CompletedTransfers()
    private var holders: UInt64 = 0

    /// - Parameters:
    ///   - maxFileSize: offers larger than this are rejected as too large.
    ///   - partialLifetime: how long an interrupted transfer (or folder) waits for its sender.
    ///   - maxPartialsPerSender: interrupted transfers (and open folders) kept per sender, each a
    ///     temporary file and a descriptor; a new one beyond this removes that sender's least
    ///     recently active one that no live connection uses. An honest sender has one at a time.
    ///   - trees: with it, folders are taken and built there.
    ///   - completedMemory: keeps completed transfers across restarts; what it recalls is answered
    ///     as completed from the start.
    public init(store: any FileStore, makeHasher: @escaping () -> any ContentHasher, maxFileSize: UInt64 = 1 << 40,
                partialLifetime: Duration = .seconds(600), maxPartialsPerSender: Int = 4, trees: (any TreeStore)? = nil,
                completedMemory: (any CompletedMemory)? = nil) {
        self.store = store
        self.completedMemory = completedMemory
        // Files and committed folders alike (ids are random: a file's never names a folder).
        for done in completedMemory?.recalled ?? [] {
            let key = PartialTransfers.Key(senderKey: done.senderKey, id: done.id)
            completedFiles.remember(.init(storedName: done.storedName, size: done.size), for: key)
            completedFolders.remember(.init(storedName: done.storedName, size: done.size), for: key)
        }
        self.trees = trees
        self.makeHasher = makeHasher
        self.maxFileSize = maxFileSize
        partials = PartialTransfers(lifetime: partialLifetime, maxPerSender: maxPartialsPerSender)
        folders = OpenFolders(lifetime: partialLifetime, maxPerSender: maxPartialsPerSender)
    }

    /// Partial files, waiting or being received, of every connection (for tests and leak checks).
    public var partialCount: Int { partials.count }

    /// Folders being received, by every connection (for tests and leak checks).
    public var openTreeCount: Int { folders.count }

    /// Discards the partial files and folders whose senders have not come back in time; never
    /// one that a live connection is using, however old its last activity.
    public func expire(now: Instant) {
        partials.expire(now: now)
        folders.expire(now: now)
    }

    /// Keeps the partial files and folders the stores found on disk at start
    /// (`FileStore.recoverPartials`, `TreeStore.recoverTrees`), each waiting for its sender's
    /// resume from `now`; what of a folder was settled is answered as completed, as it was before
    /// the restart.
    @discardableResult
    public func recoverPartials(now: Instant) -> KeptAtStart {
        let files = store.recoverPartials(makeHasher: makeHasher)
        partials.adopt(files.found, now: now)
        let trees = trees?.recoverTrees(makeHasher: makeHasher) ?? Recovered()
        for tree in trees.found {
            let senderKey = tree.origin.senderKey
            folders.adopt(tree, now: now)
            for folder in [(tree.origin.folder, tree.name)] + tree.folders {
                completedFolders.remember(.init(storedName: folder.1, size: 0), for: PartialTransfers.Key(senderKey: senderKey, id: folder.0))
            }
            for file in tree.files {
                completedFiles.remember(.init(storedName: file.path, size: file.size), for: PartialTransfers.Key(senderKey: senderKey, id: file.id))
            }
            partials.adopt(tree.partials, now: now)
        }
        return KeptAtStart(kept: files.found.count + trees.found.count, removedFiles: files.removed, removedFolders: trees.removed)
    }

    /// Runs `body`; when it fails for want of disk space (`StorageError.Code.noSpace`: the disk,
    /// or the reserve), removes the least recently active partial file that no connection holds,
    /// or failing that such a folder, and runs it again, until it succeeds or nothing is left to
    /// remove. What waits for a resume never crowds out a transfer that is running: kept state is
    /// bounded across senders by the space the reserve leaves (issue 32). `gaveWay` hears the
    /// name of each one removed.
    func withRoomOnDisk<Result>(_ body: () throws -> Result, gaveWay: (String) -> Void) throws -> Result {
        while true {
            do {
                return try body()
            } catch {
                guard StorageError(adapting: error).code == .noSpace else { throw error }
                // Partial files first, then folders; nothing left to remove: the failure stands.
                guard let removed = partials.discardLeastRecentlyActiveWaiting() ?? folders.discardLeastRecentlyActiveWaiting() else {
                    throw error
                }
                gaveWay(removed)
            }
        }
    }

    /// The receiver stops: partial files are checkpointed and closed, and open folders closed,
    /// kept for the next run where the stores keep them. A connection still sending such a file
    /// has the rest of its data ignored.
    public func closeAll() {
        partials.closeAll()
        folders.closeAll()
    }

    /// Discards every partial file and open folder, those of live connections too (shutdown,
    /// interrupt): a connection still sending such a file has the rest of its data ignored.
    public func discardAll() {
        partials.discardAll()
        folders.discardAll()
    }

    /// A name for one more connection (one per `TransferReceiver`).
    func newHolder() -> LedgerHolder {
        holders += 1
        return LedgerHolder(number: holders)
    }
}
