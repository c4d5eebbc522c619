import Pipeline

/// The folders senders send (extension `folders`, docs/protocol.md §8.4), each built in the
/// `TreeStore`'s hidden place: its top folder opens it, its folders are made as they come, its
/// files are placed in it (the `FileReceiver` receives them), and its `commit` moves it into
/// place. Open folders outlive a connection, keyed by (sender key, tree id) like partial files,
/// and are bounded the same way: per sender, and in time.
struct FolderAssembler {
    typealias Key = PartialTransfers.Key
    typealias Event = TransferReceiver.Event

    /// Where a file of a sent folder goes, or why it cannot go anywhere.
    enum Placement {
        case placed(FileReceiver.Destination)
        /// `name` for people ("?" when its path is unusable).
        case refused(name: String, TransferMessage.RejectReason)
    }

    /// A sent folder not yet committed.
    private struct OpenTree {
        let tree: any IncomingTree
        /// The top folder's path as it travelled: every entry's path starts with it and `/`.
        let top: [UInt8]
        let name: String
        var files = 0
        var lastActivity: Instant

        func holds(_ path: [UInt8]) -> Bool { path.starts(with: top + [UInt8(ascii: "/")]) }
    }

    private let trees: (any TreeStore)?
    private let lifetime: Duration
    private let maxPerSender: Int
    private var open: [Key: OpenTree] = [:]
    private var completed = CompletedTransfers()

    /// - Parameters:
    ///   - trees: where folders are built; without it, every top folder is refused.
    ///   - lifetime: how long a folder waits for its sender to come back.
    ///   - maxPerSender: folders in progress per sender; a new one removes the least recently active.
    init(trees: (any TreeStore)?, lifetime: Duration, maxPerSender: Int) {
        self.trees = trees
        self.lifetime = lifetime
        self.maxPerSender = max(1, maxPerSender)
    }

    var count: Int { open.count }

    /// A folder of tree `tree`; the first one (a one-component path) opens the tree.
    mutating func folder(_ id: TransferID, tree: TransferID, path: [UInt8], now: Instant,
                         from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let key = sender.key(for: id)
        if let done = completed[key] { return .confirm(id: id, status: .saved, storedName: done.storedName) }
        guard let parsed = try? RelativePath(wire: path) else { return refuse(id, name: "?", .badName, from: sender, events: &events) }
        let treeKey = sender.key(for: tree)
        let name = parsed.description
        if parsed.components.count == 1 {
            guard open[treeKey] == nil, completed[treeKey] == nil, let trees else {
                return refuse(id, name: name, .exists, from: sender, events: &events)
            }
            makeRoom(for: sender.key)
            do {
                let incoming = try trees.beginTree(named: name)
                open[treeKey] = OpenTree(tree: incoming, top: path, name: name, lastActivity: now)
            } catch {
                events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(StorageError(adapting: error))))
                return .reject(id: id, reason: .couldNotStore)
            }
        } else {
            guard var tree = open[treeKey], tree.holds(path) else { return refuse(id, name: name, .noFolder, from: sender, events: &events) }
            do {
                try tree.tree.makeFolder(Array(parsed.components.dropFirst()))
            } catch {
                let error = StorageError(adapting: error)
                if error.code == .exists { return refuse(id, name: name, .exists, from: sender, events: &events) }
                events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
                return .reject(id: id, reason: .couldNotStore)
            }
            tree.lastActivity = now
            open[treeKey] = tree
        }
        let stored = parsed.components.last ?? name
        completed.remember(.init(storedName: stored, size: 0), for: key)
        return .confirm(id: id, status: .saved, storedName: stored)
    }

    /// Where the file `entry` goes: below the top folder of its open tree, which counts it.
    mutating func place(_ entry: TransferMessage.Entry, now: Instant, from sender: AuthenticatedSender) -> Placement {
        guard let path = try? RelativePath(wire: entry.path), path.components.count >= 2 else { return .refused(name: "?", .badName) }
        let name = path.description
        let treeKey = sender.key(for: entry.tree)
        guard var tree = open[treeKey], tree.holds(entry.path) else { return .refused(name: name, .noFolder) }
        tree.files += 1
        tree.lastActivity = now
        open[treeKey] = tree
        return .placed(.tree(path: name, tree.tree, below: Array(path.components.dropFirst()), executable: entry.executable))
    }

    /// The end of tree `tree`: it moves into place.
    mutating func commit(_ tree: TransferID, from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let treeKey = sender.key(for: tree)
        if let done = completed[treeKey] { return .confirm(id: tree, status: .saved, storedName: done.storedName) }
        guard let building = open.removeValue(forKey: treeKey) else { return .reject(id: tree, reason: .noFolder) }
        let stored: String
        do {
            stored = try building.tree.commit()
        } catch {
            building.tree.discard()
            events.append(.fileFailed(sender: sender.name, name: building.name, .couldNotStore(StorageError(adapting: error))))
            return .confirm(id: tree, status: .couldNotStore, storedName: "")
        }
        completed.remember(.init(storedName: stored, size: 0), for: treeKey)
        events.append(.folderSaved(sender: sender.name, name: building.name, storedName: stored, files: building.files))
        return .confirm(id: tree, status: .saved, storedName: stored)
    }

    /// The link of the sender with `senderKey` is gone: its folders wait from now, however long
    /// their last file took.
    mutating func connectionLost(of senderKey: [UInt8], now: Instant) {
        for (key, tree) in open where key.senderKey == senderKey {
            open[key]?.lastActivity = max(tree.lastActivity, now)
        }
    }

    /// Nothing `sender` was building is kept: each folder is removed and reported with `failure`.
    mutating func abandon(from sender: AuthenticatedSender, because failure: FileFailure, events: inout [Event]) {
        for (key, tree) in open where key.senderKey == sender.key {
            tree.tree.discard()
            open[key] = nil
            events.append(.fileFailed(sender: sender.name, name: tree.name, failure))
        }
    }

    /// Discards the folders whose senders have not come back in time.
    mutating func expire(now: Instant) {
        for (key, tree) in open where now.duration(since: tree.lastActivity) > lifetime {
            tree.tree.discard()
            open[key] = nil
        }
    }

    mutating func discardAll() {
        for tree in open.values { tree.tree.discard() }
        open.removeAll()
    }

    /// At most `maxPerSender` folders per sender in progress: the least recently active goes.
    private mutating func makeRoom(for senderKey: [UInt8]) {
        let mine = open.filter { $0.key.senderKey == senderKey }
        if mine.count >= maxPerSender, let oldest = mine.min(by: { $0.value.lastActivity < $1.value.lastActivity }) {
            oldest.value.tree.discard()
            open[oldest.key] = nil
        }
    }

    /// Refuses a folder for `reason` and reports it (a folder carries no data to ignore).
    private func refuse(_ id: TransferID, name: String, _ reason: TransferMessage.RejectReason,
                        from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        events.append(.fileFailed(sender: sender.name, name: name, .rejected(reason)))
        return .reject(id: id, reason: reason)
    }
}
