import Pipeline

/// The receiving side of the transfer layer: accepts offers from authenticated senders, writes
/// data through the handed `FileStore`, checks the whole-file hash, and commits only then.
///
/// Partial transfers outlive a connection, keyed by (sender key, transfer id), so a sender that
/// reconnects resumes where the data stopped, and nobody else can continue its transfer.
public struct TransferReceiver {
    public enum Event: Equatable, Sendable {
        case fileStarted(sender: String, name: String, size: UInt64?, resumedAt: UInt64)
        case progress(name: String, received: UInt64, size: UInt64?)
        case fileSaved(sender: String, name: String, storedName: String, size: UInt64)
        case fileFailed(sender: String, name: String, FileFailure)
        /// A sent folder is in place under `storedName`, with `files` files in it.
        case folderSaved(sender: String, name: String, storedName: String, files: Int)
        case sessionEnded(sender: String)
    }

    private typealias Key = PartialTransfers.Key

    private enum Current {
        case none
        case receiving(Key)
        case completed(Key)
        /// The offer was rejected or storing failed: its remaining data is ignored until `done`.
        case ignoring(TransferID)
        case ended
    }

    private let store: any FileStore
    private let makeHasher: () -> any ContentHasher
    private let maxFileSize: UInt64
    /// The extensions this receiver grants; those granted on the current connection.
    private let supported: TransferExtensions
    public private(set) var extensions: TransferExtensions = []
    private var decompressor: (any ChunkDecompressor)?
    private let trees: (any TreeStore)?
    /// Folders being received, by (sender key, tree id); they outlive a connection like partials.
    private var openTrees: [Key: OpenTree] = [:]
    private let partialLifetime: Duration
    private let maxPartialsPerSender: Int

    /// A sent folder not yet committed.
    private struct OpenTree {
        let tree: any IncomingTree
        /// The top folder's path as it travelled: every entry's path starts with it and `/`.
        let top: [UInt8]
        let name: String
        var files = 0
        var lastActivity: Instant
    }
    private var partials: PartialTransfers
    private var completed = CompletedTransfers()
    private var sender = ""
    private var senderKey: [UInt8] = []
    private var current = Current.none
    private var pendingEvents: [Event] = []

    /// - Parameters:
    ///   - maxFileSize: offers larger than this are rejected as too large.
    ///   - partialLifetime: how long an interrupted transfer waits for its sender to come back.
    ///   - maxPartialsPerSender: interrupted transfers kept per sender (each holds a temporary
    ///     file and a descriptor); a new file beyond this removes that sender's least recently
    ///     active one. An honest sender has one at a time.
    ///   - decompressor: with it, the receiver grants `compression` to a sender that asks.
    ///   - trees: with it, the receiver grants `folders`; folders are built there.
    ///   - firstContact: the receiver grants `firstContact` (its user is asked about unknown senders).
    public init(store: any FileStore, makeHasher: @escaping () -> any ContentHasher,
                maxFileSize: UInt64 = 1 << 40, partialLifetime: Duration = .seconds(600),
                maxPartialsPerSender: Int = 4, decompressor: (any ChunkDecompressor)? = nil, trees: (any TreeStore)? = nil,
                firstContact: Bool = false) {
        // Pipelined offers need nothing more of this receiver: it answers every message in order.
        var supported: TransferExtensions = [.pipelining]
        if firstContact { supported.insert(.firstContact) }
        if decompressor != nil { supported.insert(.compression) }
        if trees != nil { supported.insert(.folders) }
        self.supported = supported
        self.trees = trees
        self.partialLifetime = partialLifetime
        self.maxPartialsPerSender = max(1, maxPartialsPerSender)
        self.decompressor = decompressor
        self.store = store
        self.makeHasher = makeHasher
        self.maxFileSize = maxFileSize
        self.partials = PartialTransfers(lifetime: partialLifetime, maxPerSender: maxPartialsPerSender)
    }

    public mutating func takeEvents() -> [Event] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// Whether the sender of this connection has said goodbye.
    public var sessionEnded: Bool {
        if case .ended = current { return true }
        return false
    }

    /// The extensions this receiver grants (what its extensions characteristic lists).
    public var grantable: TransferExtensions { supported }

    /// What this receiver grants a sender that asks for `asked`.
    public func granting(_ asked: TransferExtensions) -> TransferExtensions { asked.intersection(supported) }

    /// Partial transfers waiting for their senders (for tests and leak checks).
    public var partialCount: Int { partials.count }

    /// A new connection from an authenticated sender opens with `opening` (handshake message 1:
    /// an offer, after a `hello` if the sender asks for extensions; with `folders` granted, a
    /// folder's `entry`, `folder` or `commit` instead of the offer). Returns the reply that rides
    /// in handshake message 2: the extensions granted (if asked), then the answer to the offer.
    public mutating func begin(sender: String, senderKey: [UInt8], opening: [TransferMessage], now: Instant) throws(TransferError) -> [TransferMessage] {
        self.sender = sender
        self.senderKey = senderKey
        current = .none
        extensions = []
        var hello: [TransferMessage] = []
        if case .hello(let asked) = opening.first {
            extensions = granting(asked)
            hello = [.hello(extensions)]
        }
        guard opens(opening), let first = opening.last else { throw .unexpected(opening.last?.kind ?? .hello) }
        let replies = try receive(first, now: now)
        guard replies.count == 1 else { throw .unexpected(first.kind) }
        return hello + replies
    }

    /// Whether `opening` can open a connection here (`begin`): one offer, after a `hello` if
    /// any; where `folders` is granted, also any item of a folder (a resume may start there).
    public func opens(_ opening: [TransferMessage]) -> Bool {
        var rest = opening[...]
        var granted: TransferExtensions = []
        if case .hello(let asked) = rest.first {
            granted = granting(asked)
            rest = rest.dropFirst()
        }
        guard rest.count == 1, let first = rest.first else { return false }
        switch first.kind {
        case .offer: return true
        case .entry, .folder, .commit: return granted.contains(.folders)
        default: return false
        }
    }

    /// The link is gone. Partial files and folders stay, waiting for a resume, until they expire;
    /// a file that holds no byte yet is removed at once (resuming it is the same as starting afresh).
    public mutating func connectionLost(now: Instant) {
        if case .receiving(let key) = current, let partial = partials[key] {
            if partial.received == 0 {
                partials.discard(key)
            } else {
                partials[key]?.lastActivity = now
            }
        }
        // This sender's folders wait from now, however long their last file took.
        for (key, open) in openTrees where key.senderKey == senderKey {
            openTrees[key]?.lastActivity = max(open.lastActivity, now)
        }
        current = .none
    }

    /// The connection failed in a way only tampering or a misbehaving sender causes (a record that
    /// did not authenticate, a broken transfer rule): the file in progress is not kept for a
    /// resume. Its partial is removed and reported with `failure`.
    public mutating func abandonCurrent(because failure: FileFailure) {
        if case .receiving(let key) = current { fail(key, failure) }
        current = .none
        // Nothing this sender was building is kept either.
        for (key, open) in openTrees where key.senderKey == senderKey {
            open.tree.discard()
            openTrees[key] = nil
            pendingEvents.append(.fileFailed(sender: sender, name: open.name, failure))
        }
    }

    /// Discards partial transfers whose senders have not come back in time.
    public mutating func expirePartials(now: Instant) {
        if case .receiving(let active) = current {
            partials.expire(now: now, keeping: active)
        } else {
            partials.expire(now: now, keeping: nil)
        }
        for (key, open) in openTrees where now.duration(since: open.lastActivity) > partialLifetime {
            open.tree.discard()
            openTrees[key] = nil
        }
    }

    /// Discards every partial transfer and folder (shutdown, interrupt).
    public mutating func discardAll() {
        partials.discardAll()
        for open in openTrees.values { open.tree.discard() }
        openTrees.removeAll()
        current = .none
    }

    /// Folders being received (for tests and leak checks).
    public var openTreeCount: Int { openTrees.count }

    /// Handles one message from the sender; returns the replies to send, in order.
    public mutating func receive(_ message: TransferMessage, now: Instant) throws(TransferError) -> [TransferMessage] {
        switch message {
        case .offer(let offer):
            return [try handleOffer(id: offer.id, size: offer.size, target: .file(offer.nameBytes), now: now)]
        case .entry(let entry):
            guard extensions.contains(.folders) else { throw .unexpected(.entry) }
            return [try handleOffer(id: entry.id, size: entry.size, target: .treeFile(entry), now: now)]
        case .folder(let id, let tree, let path):
            guard extensions.contains(.folders) else { throw .unexpected(.folder) }
            return [try handleFolder(id: id, tree: tree, path: path, now: now)]
        case .commit(let tree):
            guard extensions.contains(.folders) else { throw .unexpected(.commit) }
            return [try handleCommit(tree: tree)]
        case .data(let bytes):
            return try handleData(.raw(bytes), now: now)
        case .zdata(let originalSize, let frame):
            guard extensions.contains(.compression) else { throw .unexpected(.zdata) }
            return try handleData(.compressed(originalSize: originalSize, frame: frame), now: now)
        case .done(let id, let hash):
            return try handleDone(id: id, hash: hash)
        case .bye:
            switch current {
            case .receiving: throw .unexpected(.bye)
            default:
                current = .ended
                pendingEvents.append(.sessionEnded(sender: sender))
                return [.bye]
            }
        case .batch(let messages):
            // As if each had come in its own record; the answers go back together too.
            guard extensions.contains(.pipelining) else { throw .unexpected(.batch) }
            var replies: [TransferMessage] = []
            for message in messages { replies += try receive(message, now: now) }
            return TransferMessage.packed(replies, limit: TransferConstants.maxBatchLength)
        case .accept, .ack, .confirm, .reject, .hello, .pending:
            throw .unexpected(message.kind)
        }
    }

    // MARK: - Steps

    /// What an offer is for: a single file by its name, or a file of a sent folder by its path.
    private enum Target {
        case file([UInt8])
        case treeFile(TransferMessage.Entry)

        var kind: TransferMessage.Kind {
            if case .file = self { .offer } else { .entry }
        }
    }

    /// An `offer` or an `entry`: a new file, a resume, or a file completed on an earlier connection.
    private mutating func handleOffer(id: TransferID, size: UInt64?, target: Target, now: Instant) throws(TransferError) -> TransferMessage {
        try expectIdle(target.kind)
        let key = Key(senderKey: senderKey, id: id)
        // The sender's history starts afresh at every accept, so does ours.
        decompressor?.reset()
        if let done = completed[key] {
            current = .completed(key)
            return .accept(id: id, offset: done.size)
        }
        if let partial = partials[key], partial.size == size {
            // A resume: the file keeps the name it was first offered under.
            partials[key]?.lastActivity = now
            current = .receiving(key)
            pendingEvents.append(.fileStarted(sender: sender, name: partial.name, size: partial.size, resumedAt: partial.received))
            return .accept(id: id, offset: partial.received)
        }
        // The same id with another size is another file: start it afresh.
        partials.discard(key)
        // Every unusable name or path costs that file alone: it is rejected and the session goes on.
        let name: String
        let begin: () throws -> any IncomingFile
        switch target {
        case .file(let bytes):
            guard let offered = String(validating: bytes, as: UTF8.self), let safe = safeFileName(offered) else {
                return refuse(id, name: "?", .badName)
            }
            let (store, sender) = (self.store, self.sender)
            name = safe
            begin = { try store.begin(name: safe, size: size, sender: sender) }
        case .treeFile(let entry):
            guard let path = try? RelativePath(wire: entry.path), path.components.count >= 2 else {
                return refuse(id, name: "?", .badName)
            }
            name = path.description
            let treeKey = Key(senderKey: senderKey, id: entry.tree)
            guard var open = openTrees[treeKey], entry.path.starts(with: open.top + [UInt8(ascii: "/")]) else {
                return refuse(id, name: name, .noFolder)
            }
            open.files += 1
            open.lastActivity = now
            openTrees[treeKey] = open
            let below = Array(path.components.dropFirst())
            begin = { try open.tree.beginFile(below, size: size, executable: entry.executable) }
        }
        if let size, size > maxFileSize {
            return refuse(id, name: name, .tooLarge)
        }
        let file: any IncomingFile
        do {
            file = try begin()
        } catch {
            let code = (error as? StorageError)?.code
            if code == .exists { return refuse(id, name: name, .exists) }
            current = .ignoring(id)
            pendingEvents.append(.fileFailed(sender: sender, name: name, .couldNotStore(StorageError(adapting: error))))
            return .reject(id: id, reason: code == .tooLarge || code == .noSpace ? .tooLarge : .couldNotStore)
        }
        partials.insert(.init(name: name, size: size, file: file, hasher: makeHasher(), lastActivity: now), for: key)
        current = .receiving(key)
        pendingEvents.append(.fileStarted(sender: sender, name: name, size: size, resumedAt: 0))
        return .accept(id: id, offset: 0)
    }

    /// A folder of a sent tree; the first one (a one-component path) opens the tree.
    private mutating func handleFolder(id: TransferID, tree: TransferID, path: [UInt8], now: Instant) throws(TransferError) -> TransferMessage {
        try expectIdle(.folder)
        let key = Key(senderKey: senderKey, id: id)
        if let done = completed[key] { return .confirm(id: id, status: .saved, storedName: done.storedName) }
        guard let parsed = try? RelativePath(wire: path) else { return refuse(id, name: "?", .badName, ignoring: false) }
        let treeKey = Key(senderKey: senderKey, id: tree)
        let name = parsed.description
        if parsed.components.count == 1 {
            guard openTrees[treeKey] == nil, completed[treeKey] == nil, let trees else {
                return refuse(id, name: name, .exists, ignoring: false)
            }
            // At most `maxPartialsPerSender` folders per sender in progress: the oldest goes.
            let mine = openTrees.filter { $0.key.senderKey == senderKey }
            if mine.count >= maxPartialsPerSender, let oldest = mine.min(by: { $0.value.lastActivity < $1.value.lastActivity }) {
                oldest.value.tree.discard()
                openTrees[oldest.key] = nil
            }
            do {
                let incoming = try trees.beginTree(named: name)
                openTrees[treeKey] = OpenTree(tree: incoming, top: path, name: name, lastActivity: now)
            } catch {
                pendingEvents.append(.fileFailed(sender: sender, name: name, .couldNotStore(StorageError(adapting: error))))
                return .reject(id: id, reason: .couldNotStore)
            }
        } else {
            guard var open = openTrees[treeKey], path.starts(with: open.top + [UInt8(ascii: "/")]) else {
                return refuse(id, name: name, .noFolder, ignoring: false)
            }
            do {
                try open.tree.makeFolder(Array(parsed.components.dropFirst()))
            } catch {
                if (error as? StorageError)?.code == .exists { return refuse(id, name: name, .exists, ignoring: false) }
                pendingEvents.append(.fileFailed(sender: sender, name: name, .couldNotStore(StorageError(adapting: error))))
                return .reject(id: id, reason: .couldNotStore)
            }
            open.lastActivity = now
            openTrees[treeKey] = open
        }
        let stored = parsed.components.last ?? name
        completed.remember(.init(storedName: stored, size: 0), for: key)
        return .confirm(id: id, status: .saved, storedName: stored)
    }

    /// The end of a sent tree: it moves into place.
    private mutating func handleCommit(tree: TransferID) throws(TransferError) -> TransferMessage {
        try expectIdle(.commit)
        let treeKey = Key(senderKey: senderKey, id: tree)
        if let done = completed[treeKey] { return .confirm(id: tree, status: .saved, storedName: done.storedName) }
        guard let open = openTrees.removeValue(forKey: treeKey) else { return .reject(id: tree, reason: .noFolder) }
        let stored: String
        do {
            stored = try open.tree.commit()
        } catch {
            open.tree.discard()
            pendingEvents.append(.fileFailed(sender: sender, name: open.name, .couldNotStore(StorageError(adapting: error))))
            return .confirm(id: tree, status: .couldNotStore, storedName: "")
        }
        completed.remember(.init(storedName: stored, size: 0), for: treeKey)
        pendingEvents.append(.folderSaved(sender: sender, name: open.name, storedName: stored, files: open.files))
        return .confirm(id: tree, status: .saved, storedName: stored)
    }

    /// Offers, folders and commits come only between files.
    private mutating func expectIdle(_ kind: TransferMessage.Kind) throws(TransferError) {
        switch current {
        case .none, .ignoring, .completed: current = .none
        case .receiving, .ended: throw .unexpected(kind)
        }
    }

    /// Refuses one file or folder for `reason` and reports it; a refused file's data is ignored.
    private mutating func refuse(_ id: TransferID, name: String, _ reason: TransferMessage.RejectReason, ignoring: Bool = true) -> TransferMessage {
        if ignoring { current = .ignoring(id) }
        pendingEvents.append(.fileFailed(sender: sender, name: name, .rejected(reason)))
        return .reject(id: id, reason: reason)
    }

    /// File bytes as a `data` or `zdata` message carries them.
    private enum Chunk {
        case raw([UInt8])
        case compressed(originalSize: Int, frame: [UInt8])

        var count: Int {
            switch self {
            case .raw(let bytes): bytes.count
            case .compressed(let originalSize, _): originalSize
            }
        }

        var kind: TransferMessage.Kind {
            if case .raw = self { .data } else { .zdata }
        }
    }

    private mutating func handleData(_ chunk: Chunk, now: Instant) throws(TransferError) -> [TransferMessage] {
        switch current {
        case .ignoring:
            return []
        case .receiving(let key):
            guard var partial = partials[key] else { throw .unexpected(chunk.kind) }
            // Judged on the declared size, before anything is decompressed: a chunk never makes
            // the file longer than offered (or than this receiver takes).
            let end = partial.received + UInt64(chunk.count)
            if let size = partial.size, end > size {
                fail(key, .senderBrokeProtocol(.moreBytesThanOffered))
                throw .moreBytesThanOffered
            }
            if end > maxFileSize {
                // A stream (no size offered) that outgrew what this receiver takes.
                fail(key, .rejected(.tooLarge))
                current = .ignoring(key.id)
                return [.reject(id: key.id, reason: .tooLarge)]
            }
            let bytes: [UInt8]
            switch chunk {
            case .raw(let raw):
                bytes = raw
                if extensions.contains(.compression) { decompressor?.appendRaw(raw) }
            case .compressed(let originalSize, let frame):
                do {
                    bytes = try decompressor?.decompress(frame, expectedSize: originalSize) ?? []
                } catch {
                    fail(key, .senderBrokeProtocol(.decompressionFailed(error)))
                    throw .decompressionFailed(error)
                }
                guard bytes.count == originalSize else {
                    let error = ChunkDecompressionError(code: .sizeMismatch)
                    fail(key, .senderBrokeProtocol(.decompressionFailed(error)))
                    throw .decompressionFailed(error)
                }
            }
            do {
                try partial.file.write(bytes, at: partial.received)
            } catch {
                fail(key, .couldNotStore(StorageError(adapting: error)))
                current = .ignoring(key.id)
                return [.reject(id: key.id, reason: .couldNotStore)]
            }
            partial.hasher.update(bytes)
            partial.received = end
            partial.lastActivity = now
            var replies: [TransferMessage] = []
            if end - partial.lastAck >= TransferConstants.ackInterval {
                partial.lastAck = end
                replies.append(.ack(id: key.id, received: end))
                pendingEvents.append(.progress(name: partial.name, received: end, size: partial.size))
            }
            partials[key] = partial
            return replies
        case .none, .completed, .ended:
            throw .unexpected(chunk.kind)
        }
    }

    private mutating func handleDone(id: TransferID, hash: [UInt8]) throws(TransferError) -> [TransferMessage] {
        switch current {
        case .ignoring(let ignored) where ignored == id:
            current = .none
            return []
        case .completed(let key) where key.id == id:
            current = .none
            guard let done = completed[key] else { throw .unexpected(.done) }
            return [.confirm(id: id, status: .saved, storedName: done.storedName)]
        case .receiving(let key) where key.id == id:
            guard var partial = partials[key] else { throw .unexpected(.done) }
            current = .none
            if let size = partial.size, partial.received != size {
                fail(key, .integrity)
                return [.confirm(id: id, status: .hashMismatch, storedName: "")]
            }
            let actual = partial.hasher.finalize()
            guard actual == hash else {
                fail(key, .integrity)
                return [.confirm(id: id, status: .hashMismatch, storedName: "")]
            }
            let storedName: String
            do {
                storedName = try partial.file.commit()
            } catch {
                fail(key, .couldNotStore(StorageError(adapting: error)))
                return [.confirm(id: id, status: .couldNotStore, storedName: "")]
            }
            _ = partials.remove(key)
            completed.remember(.init(storedName: storedName, size: partial.received), for: key)
            pendingEvents.append(.fileSaved(sender: sender, name: partial.name, storedName: storedName, size: partial.received))
            return [.confirm(id: id, status: .saved, storedName: storedName)]
        default:
            throw .unexpected(.done)
        }
    }

    private mutating func fail(_ key: Key, _ failure: FileFailure) {
        guard let partial = partials.remove(key) else { return }
        partial.file.discard()
        pendingEvents.append(.fileFailed(sender: sender, name: partial.name, failure))
    }
}
