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

    /// A folder of tree `tree`; the first one (a one-component path) opens the tree.
    mutating func folder(_ id: TransferID, tree: TransferID, path: [UInt8], now: Instant,
                         from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let key = sender.key(for: id)
        if let done = ledger.completedFolders[key] { return .confirm(id: id, status: .saved, storedName: done.storedName) }
        guard let parsed = try? RelativePath(wire: path) else { return refuse(id, name: "?", .badName, from: sender, events: &events) }
        let treeKey = sender.key(for: tree)
        let name = parsed.description
        if parsed.components.count == 1 {
            guard ledger.folders[treeKey] == nil, ledger.completedFolders[treeKey] == nil, let trees = ledger.trees else {
                return refuse(id, name: name, .exists, from: sender, events: &events)
            }
            ledger.folders.makeRoom(for: sender.key, by: holder)
            do {
                let incoming = try trees.beginTree(named: name, origin: TreeOrigin(senderKey: sender.key, tree: tree, folder: id, top: path))
                ledger.folders[treeKey] = OpenFolders.Folder(tree: incoming, top: path, name: name, lastActivity: .at(now), holders: [holder])
            } catch {
                events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(StorageError(adapting: error))))
                return .reject(id: id, reason: .couldNotStore)
            }
        } else {
            guard var tree = ledger.folders[treeKey], tree.holds(path) else {
                return refuse(id, name: name, .noFolder, from: sender, events: &events)
            }
            do {
                try tree.tree.makeFolder(Array(parsed.components.dropFirst()), id: id)
            } catch {
                let error = StorageError(adapting: error)
                if error.code == .exists { return refuse(id, name: name, .exists, from: sender, events: &events) }
                events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
                return .reject(id: id, reason: .couldNotStore)
            }
            tree.lastActivity = .at(now)
            tree.holders.insert(holder)
            ledger.folders[treeKey] = tree
        }
        let stored = parsed.components.last ?? name
        ledger.completedFolders.remember(.init(storedName: stored, size: 0), for: key)
        return .confirm(id: id, status: .saved, storedName: stored)
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
        ledger.folders[treeKey] = tree
        return .placed(.tree(path: name, tree.tree, below: Array(path.components.dropFirst()), executable: entry.executable))
    }

    /// The end of tree `tree`: it moves into place (whichever connection of its sender built it).
    mutating func commit(_ tree: TransferID, from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let treeKey = sender.key(for: tree)
        if let done = ledger.completedFolders[treeKey] { return .confirm(id: tree, status: .saved, storedName: done.storedName) }
        guard let building = ledger.folders.remove(treeKey) else { return .reject(id: tree, reason: .noFolder) }
        let stored: String
        do {
            stored = try building.tree.commit()
        } catch {
            building.tree.discard()
            events.append(.fileFailed(sender: sender.name, name: building.name, .couldNotStore(StorageError(adapting: error))))
            return .confirm(id: tree, status: .couldNotStore, storedName: "")
        }
        ledger.completedFolders.remember(.init(storedName: stored, size: 0), for: treeKey)
        // Best effort, as for a file: if it is not kept, a restart before the sender hears
        // `confirm` makes its `commit` answered "no such tree" although the folder is in place.
        try? ledger.completedMemory?.remember(.init(senderKey: treeKey.senderKey, id: tree, storedName: stored, size: 0))
        events.append(.folderSaved(sender: sender.name, name: building.name, storedName: stored, files: building.files))
        return .confirm(id: tree, status: .saved, storedName: stored)
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
