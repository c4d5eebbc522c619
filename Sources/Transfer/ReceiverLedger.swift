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
        for done in completedMemory?.recalled ?? [] {
            completedFiles.remember(.init(storedName: done.storedName, size: done.size),
                                    for: PartialTransfers.Key(senderKey: done.senderKey, id: done.id))
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

    /// Keeps the partial files the store found on disk at start (`FileStore.recoverPartials`),
    /// each waiting for its sender's resume from `now`; returns how many.
    @discardableResult
    public func recoverPartials(now: Instant) -> Int {
        let found = store.recoverPartials(makeHasher: makeHasher)
        partials.adopt(found, now: now)
        return found.count
    }

    /// The receiver stops: partial files are checkpointed and closed, kept for the next run where
    /// the store keeps them; open folders are removed. A connection still sending such a file has
    /// the rest of its data ignored.
    public func closeAll() {
        partials.closeAll()
        folders.discardAll()
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
