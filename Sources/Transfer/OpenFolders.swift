import Pipeline

/// The folders senders are building and have not committed, keyed by (sender key, tree id) like
/// partial files, and bounded the same way: per sender, and in time.
///
/// Several connections of one receiver may use the table at once, so each folder remembers the
/// live connections that touched it (`holders`): expiry and eviction pass those by, since a file
/// that such a connection is writing into the folder may take longer than `lifetime`.
struct OpenFolders {
    typealias Key = PartialTransfers.Key

    /// A sent folder not yet committed.
    struct Folder {
        let tree: any IncomingTree
        /// The top folder's path as it travelled: every entry's path starts with it and `/`.
        let top: [UInt8]
        let name: String
        var files = 0
        var lastActivity: LastActivity
        /// The live connections that opened it or placed something in it.
        var holders: Set<LedgerHolder> = []
        /// Its items (the top folder, folders, files) placed in this folder as it is now: one
        /// counts as done only here (`FolderAssembler.isDone`), never in a folder built again
        /// after this one was abandoned, expired or lost.
        var placed: Set<Key> = []

        func holds(_ path: [UInt8]) -> Bool { path.starts(with: top + [UInt8(ascii: "/")]) }
    }

    let lifetime: Duration
    let maxPerSender: Int
    private var table: [Key: Folder] = [:]

    init(lifetime: Duration, maxPerSender: Int) {
        self.lifetime = lifetime
        self.maxPerSender = max(1, maxPerSender)
    }

    var count: Int { table.count }

    subscript(key: Key) -> Folder? {
        get { table[key] }
        set { table[key] = newValue }
    }

    /// Makes room for one more folder of `senderKey`, opened by the connection `holder`: beyond
    /// `maxPerSender - 1`, the least recently active is removed, never one that another live
    /// connection holds (so one connection alone still cannot keep more than `maxPerSender`).
    mutating func makeRoom(for senderKey: [UInt8], by holder: LedgerHolder) {
        let mine = table.filter { $0.key.senderKey == senderKey }
        let free = mine.filter { $0.value.holders.subtracting([holder]).isEmpty }
        if mine.count >= maxPerSender, let oldest = free.min(by: { $0.value.lastActivity < $1.value.lastActivity }) {
            discard(oldest.key)
        }
    }

    /// Stops keeping the folder of `key` without touching it (the caller commits or discards it).
    mutating func remove(_ key: Key) -> Folder? { table.removeValue(forKey: key) }

    /// The connection `holder` of the sender with `senderKey` ended: that sender's folders that no
    /// other connection holds wait from `now`, however long their last file took.
    mutating func release(heldBy holder: LedgerHolder, of senderKey: [UInt8], now: Instant) {
        for (key, folder) in table {
            if folder.holders.contains(holder) { table[key]?.holders.remove(holder) }
            if key.senderKey == senderKey, table[key]?.holders.isEmpty == true {
                table[key]?.lastActivity = max(folder.lastActivity, .at(now))
            }
        }
    }

    /// Removes and returns the folders of `senderKey` that no connection but `holder` holds.
    mutating func abandon(of senderKey: [UInt8], by holder: LedgerHolder) -> [Folder] {
        var removed: [Folder] = []
        for (key, folder) in table where key.senderKey == senderKey && folder.holders.subtracting([holder]).isEmpty {
            folder.tree.discard()
            table[key] = nil
            removed.append(folder)
        }
        return removed
    }

    /// Removes the folders whose senders have not come back in time (none that a live connection holds).
    mutating func expire(now: Instant) {
        for (key, folder) in table where folder.holders.isEmpty && folder.lastActivity.idle(at: now) > lifetime {
            discard(key)
        }
    }

    /// Removes the least recently active folder that no connection holds; its name, nil when there is none.
    mutating func discardLeastRecentlyActiveWaiting() -> String? {
        guard let oldest = table.filter({ $0.value.holders.isEmpty }).min(by: { $0.value.lastActivity < $1.value.lastActivity }) else {
            return nil
        }
        discard(oldest.key)
        return oldest.value.name
    }

    mutating func discardAll() {
        for folder in table.values { folder.tree.discard() }
        table.removeAll()
    }

    /// The receiver stops: each folder is closed, kept for the next run where its store keeps
    /// folders (`IncomingTree.closeForResume`).
    mutating func closeAll() {
        for folder in table.values { folder.tree.closeForResume() }
        table.removeAll()
    }

    /// Keeps a folder found on disk at start (`now`), waiting for its sender since its journal's
    /// last save (`RecoveredTree.age`); beyond
    /// `maxPerSender` of a sender, the least recently active is removed first.
    mutating func adopt(_ recovered: RecoveredTree, now: Instant) {
        let origin = recovered.origin
        let mine = table.filter { $0.key.senderKey == origin.senderKey }
        if mine.count >= maxPerSender, let oldest = mine.min(by: { $0.value.lastActivity < $1.value.lastActivity }) {
            discard(oldest.key)
        }
        let ids = [origin.folder] + recovered.folders.map(\.id) + recovered.files.map(\.id) + recovered.partials.map(\.checkpoint.id)
        table[Key(senderKey: origin.senderKey, id: origin.tree)] =
            Folder(tree: recovered.tree, top: origin.top, name: recovered.name,
                   files: recovered.files.count + recovered.partials.count, lastActivity: .found(at: now, age: recovered.age),
                   placed: Set(ids.map { Key(senderKey: origin.senderKey, id: $0) }))
    }

    private mutating func discard(_ key: Key) {
        table.removeValue(forKey: key)?.tree.discard()
    }
}
