import Pipeline

/// One connection's side of the folders senders send (extension `folders`, docs/protocol.md
/// §8.4), each built in the `TreeStore`'s hidden place: its top folder opens it, its folders are
/// made as they come, its files are placed in it (the `FileReceiver` receives them), and its
/// `commit` moves it into place. Open folders outlive a connection in the ledger's `OpenFolders`,
/// keyed by (sender key, tree id) like partial files, and bounded the same way: per sender, and
/// in time; a folder this connection touched is held by it until its link goes.
struct FolderAssembler {
    typealias Key = PartialTransfers.Key
    typealias Event = TransferReceiver.Event

    /// Where a file of a sent folder goes, or why it cannot go anywhere.
    enum Placement {
        case placed(FileReceiver.Destination)
        /// `name` for people ("?" when its path is unusable).
        case refused(name: String, TransferMessage.RejectReason)
    }

    let ledger: ReceiverLedger
    /// This connection, as the ledger knows it.
    let holder: LedgerHolder

    /// Folders go where `ledger.trees` says; without it, every top folder is refused.
    init(ledger: ReceiverLedger, holder: LedgerHolder? = nil) {
        self.ledger = ledger
        self.holder = holder ?? ledger.newHolder()
    }

    var count: Int { ledger.folders.count }

    /// A folder of tree `tree`; the first one (a one-component path) opens the tree. Its answer,
    /// or nil when the folder is made as `StorageWork` (where `storage.defers`; the answer comes
    /// with the outcome, `settle`).
    mutating func folder(_ id: TransferID, tree: TransferID, path: [UInt8], now: Instant, storage: inout StorageHandOff,
                         from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage? {
        let key = sender.key(for: id)
        let treeKey = sender.key(for: tree)
        if let done = ledger.completedFolders[key], isDone(key, inTree: treeKey) {
            return .confirm(id: id, status: .saved, storedName: done.storedName)
        }
        guard let parsed = try? RelativePath(wire: path) else { return refuse(id, name: "?", .badName, from: sender, events: &events) }
        let name = parsed.description
        let stored = parsed.components.last ?? name
        if parsed.components.count == 1 {
            guard ledger.folders[treeKey] == nil, ledger.completedFolders[treeKey] == nil, let trees = ledger.trees else {
                return refuse(id, name: name, .exists, from: sender, events: &events)
            }
            ledger.folders.makeRoom(for: sender.key, by: holder)
            do {
                let incoming = try trees.beginTree(named: name, origin: TreeOrigin(senderKey: sender.key, tree: tree, folder: id, top: path))
                ledger.folders[treeKey] = OpenFolders.Folder(tree: incoming, top: path, name: name, lastActivity: .at(now), holders: [holder],
                                                             placed: [key])
            } catch {
                events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(StorageError(adapting: error))))
                return .reject(id: id, reason: .couldNotStore)
            }
        } else {
            guard var tree = ledger.folders[treeKey], tree.holds(path) else {
                return refuse(id, name: name, .noFolder, from: sender, events: &events)
            }
            tree.lastActivity = .at(now)
            tree.holders.insert(holder)
            tree.placed.insert(key)
            ledger.folders[treeKey] = tree
            let components = Array(parsed.components.dropFirst())
            if storage.defers {
                storage.handOut(.makeFolder(name: name, storedName: stored), of: key, in: ledger) {
                    .makeFolder(components, id: id, in: tree.tree, ticket: $0)
                }
                return nil
            }
            do {
                try tree.tree.makeFolder(components, id: id)
            } catch {
                return failed(id, name: name, StorageError(adapting: error), from: sender, events: &events)
            }
        }
        return made(key, storedName: stored)
    }

    /// Whether the item `key` (a folder, a file) of the sent folder `treeKey` counts as done: the
    /// folder is in place whole, or the item was placed in the folder as it is being built now.
    /// An item done in a folder since abandoned, expired or lost with a power cut (its completion
    /// kept in memory or in `completedMemory`) is not done in the folder built again: it is
    /// received again, or the folder would be placed without it.
    func isDone(_ key: Key, inTree treeKey: Key) -> Bool {
        ledger.completedFolders[treeKey] != nil || ledger.folders[treeKey]?.placed.contains(key) == true
    }

    /// The folder item `key` is made: remembered, and confirmed.
    private func made(_ key: Key, storedName: String) -> TransferMessage {
        ledger.completedFolders.remember(.init(storedName: storedName, size: 0), for: key)
        return .confirm(id: key.id, status: .saved, storedName: storedName)
    }

    /// The folder item `id` could not be made: refused when something is in its way, else reported.
    private func failed(_ id: TransferID, name: String, _ error: StorageError, from sender: AuthenticatedSender,
                        events: inout [Event]) -> TransferMessage {
        if error.code == .exists { return refuse(id, name: name, .exists, from: sender, events: &events) }
        events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
        return .reject(id: id, reason: .couldNotStore)
    }

    /// Where the file `entry` goes: below the top folder of its open tree, which counts it.
    mutating func place(_ entry: TransferMessage.Entry, now: Instant, from sender: AuthenticatedSender) -> Placement {
        guard let path = try? RelativePath(wire: entry.path), path.components.count >= 2 else { return .refused(name: "?", .badName) }
        let name = path.description
        let treeKey = sender.key(for: entry.tree)
        guard var tree = ledger.folders[treeKey], tree.holds(entry.path) else { return .refused(name: name, .noFolder) }
        tree.files += 1
        tree.lastActivity = .at(now)
        tree.holders.insert(holder)
        tree.placed.insert(sender.key(for: entry.id))
        ledger.folders[treeKey] = tree
        return .placed(.tree(path: name, tree.tree, below: Array(path.components.dropFirst()), executable: entry.executable))
    }

    /// The end of tree `tree`: it moves into place (whichever connection of its sender built it).
    /// Its `confirm`, or nil when the commit goes out as `StorageWork` (where `storage.defers`;
    /// the `confirm` comes with the outcome, `settle`).
    mutating func commit(_ tree: TransferID, storage: inout StorageHandOff, from sender: AuthenticatedSender,
                         events: inout [Event]) -> TransferMessage? {
        let treeKey = sender.key(for: tree)
        if let done = ledger.completedFolders[treeKey] { return .confirm(id: tree, status: .saved, storedName: done.storedName) }
        guard let building = ledger.folders.remove(treeKey) else { return .reject(id: tree, reason: .noFolder) }
        if storage.defers {
            let memory = ledger.completedMemory
            storage.handOut(.commitFolder(name: building.name, files: building.files), of: treeKey, in: ledger) {
                .commit(building.tree, of: treeKey, rememberedIn: memory, ticket: $0)
            }
            return nil
        }
        let stored: String
        do {
            stored = try building.tree.commit()
        } catch {
            building.tree.discard()
            return commitFailed(treeKey, name: building.name, StorageError(adapting: error), from: sender, events: &events)
        }
        // Best effort, as for a file: if it is not kept, a restart before the sender hears
        // `confirm` makes its `commit` answered "no such tree" although the folder is in place.
        try? ledger.completedMemory?.remember(.init(senderKey: treeKey.senderKey, id: tree, storedName: stored, size: 0))
        return committed(treeKey, name: building.name, as: stored, files: building.files, from: sender, events: &events)
    }

    /// The folder `treeKey` is in place as `stored` (and written down in `completedMemory`).
    private func committed(_ treeKey: Key, name: String, as stored: String, files: Int, from sender: AuthenticatedSender,
                           events: inout [Event]) -> TransferMessage {
        ledger.completedFolders.remember(.init(storedName: stored, size: 0), for: treeKey)
        events.append(.folderSaved(sender: sender.name, name: name, storedName: stored, files: files))
        return .confirm(id: treeKey.id, status: .saved, storedName: stored)
    }

    private func commitFailed(_ treeKey: Key, name: String, _ error: StorageError, from sender: AuthenticatedSender,
                              events: inout [Event]) -> TransferMessage {
        events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
        return .confirm(id: treeKey.id, status: .couldNotStore, storedName: "")
    }

    /// The outcome of a folder's work (`settled`, no longer out): its answer.
    func settle(_ settled: StorageHandOff.Out, _ outcome: StorageOutcome, from sender: AuthenticatedSender,
                events: inout [Event]) -> [TransferMessage] {
        switch (settled.job, outcome.result) {
        case (.makeFolder(_, let storedName), .success):
            return [made(settled.key, storedName: storedName)]
        case (.makeFolder(let name, _), .failure(let error)):
            return [failed(settled.key.id, name: name, error, from: sender, events: &events)]
        case (.commitFolder(let name, let files), .success(.committed(let stored))):
            return [committed(settled.key, name: name, as: stored, files: files, from: sender, events: &events)]
        case (.commitFolder(let name, _), let result):
            // It failed (the worker removed the folder already), or was answered as no commit is.
            let error = if case .failure(let error) = result { error } else { StorageError(.io, "a commit answered as a checkpoint") }
            return [commitFailed(settled.key, name: name, error, from: sender, events: &events)]
        case (.commit, _), (.checkpoint, _):
            return []   // the files' (`FileReceiver.settle`)
        }
    }

    /// The link of the sender with `senderKey` is gone: its folders that no other connection
    /// holds wait from now, however long their last file took.
    mutating func connectionLost(of senderKey: [UInt8], now: Instant) {
        ledger.folders.release(heldBy: holder, of: senderKey, now: now)
    }

    /// Nothing `sender` was building is kept: each folder is removed and reported with `failure`;
    /// not those that another live connection of the same key holds (this one's failure, say a
    /// record forged on its link, is not theirs).
    mutating func abandon(from sender: AuthenticatedSender, because failure: FileFailure, events: inout [Event]) {
        for tree in ledger.folders.abandon(of: sender.key, by: holder) {
            events.append(.fileFailed(sender: sender.name, name: tree.name, failure))
        }
    }

    /// Discards the folders whose senders have not come back in time (none a live connection holds).
    mutating func expire(now: Instant) {
        ledger.folders.expire(now: now)
    }

    /// Discards every open folder, other connections' too (shutdown).
    mutating func discardAll() {
        ledger.folders.discardAll()
    }

    /// Refuses a folder for `reason` and reports it (a folder carries no data to ignore).
    private func refuse(_ id: TransferID, name: String, _ reason: TransferMessage.RejectReason,
                        from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        events.append(.fileFailed(sender: sender.name, name: name, .rejected(reason)))
        return .reject(id: id, reason: reason)
    }
}
