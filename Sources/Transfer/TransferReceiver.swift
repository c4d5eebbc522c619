import DequeModule
import Pipeline

/// The receiving side of the transfer layer: accepts offers from authenticated senders, writes
/// data through the handed `FileStore`, checks the whole-file hash, and commits only then.
///
/// Partial transfers outlive a connection, keyed by (sender key, transfer id), so a sender that
/// reconnects resumes where the data stopped, and nobody else can continue its transfer. They are
/// kept in a `ReceiverLedger`, which several receivers (one per connection, served at the same
/// time on one thread) may share: each value holds one connection's state only.
///
/// A coordinator: the extensions granted per connection are an `ExtensionGrant`, single files
/// and the files of folders a `FileReceiver` (partials, resume, the chunk transform), folders a
/// `FolderAssembler`. It routes each message and keeps the events in order.
///
/// A copy shares the ledger and counts as the same connection there: make another connection's
/// receiver with `init(ledger:decompressor:firstContact:)` instead.
public struct TransferReceiver {
    public enum Event: Equatable, Sendable {
        case fileStarted(sender: String, name: String, size: UInt64?, resumedAt: UInt64)
        case progress(name: String, received: UInt64, size: UInt64?)
        case fileSaved(sender: String, name: String, storedName: String, size: UInt64, hash: [UInt8])
        case fileFailed(sender: String, name: String, FileFailure)
        /// A sent folder is in place under `storedName`, with `files` files in it.
        case folderSaved(sender: String, name: String, storedName: String, files: Int)
        /// A file or folder kept for a resume (its sender away) was removed to make room on the
        /// disk for a transfer that is running (`ReceiverLedger.withRoomOnDisk`).
        case keptRemovedForRoom(name: String)
        case sessionEnded(sender: String)
    }

    private var grant: ExtensionGrant
    private var files: FileReceiver
    private var folders: FolderAssembler
    private var sender = AuthenticatedSender(name: "", key: [])
    /// The sender of this connection said goodbye.
    private var ended = false
    private var pendingEvents: [Event] = []
    /// Messages that came while storage work was out (`defersStorage`), this connection's or
    /// another's that they wait for (`waitingFor`), in order, and what they cost (`backlogCost`).
    private var backlog: Deque<TransferMessage> = []
    private var backlogCost = 0
    /// Data or a `done` of a file, a folder item or a folder's commit whose storage work is out on
    /// another connection of this sender (its link dropped, and the sender came back that fast):
    /// it, and what follows it, wait until that work's outcome is in the ledger, looked at every
    /// `lookAgainEvery`.
    private var waitingFor: (key: PartialTransfers.Key, lookAgainAt: Instant)?
    static let lookAgainEvery = Duration.milliseconds(20)

    /// What a sender may have sent, at most, while this receiver stores: an honest one
    /// stops at the transfer window of data and its files in flight (docs/protocol.md §5, §8.3).
    public static let maxBacklogCost = 4 * Int(TransferConstants.transferWindow)

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
        let ledger = ReceiverLedger(store: store, makeHasher: makeHasher, maxFileSize: maxFileSize, partialLifetime: partialLifetime,
                                    maxPartialsPerSender: maxPartialsPerSender, trees: trees)
        self.init(ledger: ledger, decompressor: decompressor, firstContact: firstContact)
    }

    /// One more connection's receiver over `ledger`, whose partial files, folders and completed
    /// transfers it shares with every other receiver made over it. `decompressor` must be this
    /// receiver's own (it keeps the connection's chunk history); folders are granted if the
    /// ledger has somewhere to build them.
    /// `notTrusted`: the receiver answers a sender it does not trust with `notTrusted` (§8.7, the
    /// secure channel writes it); listed here so that it is granted and listed like the others.
    public init(ledger: ReceiverLedger, decompressor: (any ChunkDecompressor)? = nil, firstContact: Bool = false, notTrusted: Bool = false) {
        // Pipelined offers need nothing more of this receiver: it answers every message in order.
        // Every receiver may be at its cap when a sender comes (`busy`).
        var supported: TransferExtensions = [.pipelining, .busy]
        if firstContact { supported.insert(.firstContact) }
        if notTrusted { supported.insert(.notTrusted) }
        if decompressor != nil { supported.insert(.compression) }
        if ledger.trees != nil { supported.insert(.folders) }
        grant = ExtensionGrant(supported: supported)
        let holder = ledger.newHolder()
        files = FileReceiver(ledger: ledger, holder: holder, chunks: ChunkDecoder(decompressor: decompressor))
        folders = FolderAssembler(ledger: ledger, holder: holder)
    }

    /// What this receiver shares with the other connections' receivers made over it.
    public var ledger: ReceiverLedger { files.ledger }

    public mutating func takeEvents() -> [Event] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// Whether commits, checkpoints and folders go to the driver as `StorageWork`
    /// (`takeStorageWork`), to be run off the caller's thread and answered with `storageDone`;
    /// false: they run in `receive`. While work is out, the connection takes no step: messages
    /// wait, in order, for its outcome.
    public var defersStorage: Bool {
        get { files.storage.defers }
        set { files.storage.defers = newValue }
    }

    /// Storage work made since the last call (`defersStorage`), for the driver to run in order.
    public mutating func takeStorageWork() -> [StorageWork] { files.storage.take() }

    /// Whether storage work is out and its outcome not yet in.
    public var isAwaitingStorage: Bool { files.storage.isOut }

    /// The outcome of the work out: its answer (a `confirm`, a `reject`, or none for a checkpoint
    /// that went well), then the answers to what waited for it (until the next work goes out).
    /// Also after the connection ended (the ledger learns of it; the session drops the answers).
    public mutating func storageDone(_ outcome: StorageOutcome, now: Instant) throws(TransferError) -> [TransferMessage] {
        guard let settled = files.storage.settle(outcome, in: ledger) else { return [] }
        let answers = switch settled.job {
        case .commit, .checkpoint: files.settle(settled, outcome, now: now, from: sender, events: &pendingEvents)
        case .makeFolder, .commitFolder: folders.settle(settled, outcome, from: sender, events: &pendingEvents)
        }
        return try answers + answerWaiting(now: now)
    }

    /// When to look again whether the storage work another connection has out, which a message
    /// here waits for, is settled.
    public var nextDeadline: Instant? { waitingFor?.lookAgainAt }

    /// At `nextDeadline`: once the work waited for is settled, the answers to what waited.
    public mutating func handleTimers(now: Instant) throws(TransferError) -> [TransferMessage] {
        guard let waiting = waitingFor, now >= waiting.lookAgainAt else { return [] }
        guard !files.isOut(waiting.key) else {
            waitingFor = (waiting.key, now.advanced(by: Self.lookAgainEvery))
            return []
        }
        waitingFor = nil
        defer { openingWaits = false }
        return try answerWaiting(now: now)
    }

    /// Whether messages wait, in order: for this connection's commit, or another's.
    private var isHolding: Bool { isAwaitingStorage || waitingFor != nil }

    /// The answers to the messages that waited, until one has to wait again.
    private mutating func answerWaiting(now: Instant) throws(TransferError) -> [TransferMessage] {
        var replies: [TransferMessage] = []
        while !isHolding, let next = backlog.popFirst() {
            backlogCost -= Self.cost(of: next)
            replies += try receive(next, now: now)
        }
        return replies
    }

    /// Whether `message` waits because storage work of `key` (a folder item, a sent folder, the
    /// current file) is out on another connection of this sender.
    private mutating func holds(_ message: TransferMessage, whileOutElsewhere key: PartialTransfers.Key?,
                                now: Instant) throws(TransferError) -> Bool {
        guard let key, files.isOut(key) else { return false }
        waitingFor = (key, now.advanced(by: Self.lookAgainEvery))
        try hold([message], first: true)
        return true
    }

    /// `messages` wait, within what a sender may have in flight: after those waiting, or `first`,
    /// ahead of them. What starts a wait (the message that must wait, the rest of a batch whose
    /// message sent work out) came before everything waiting: a wait can start while what waited
    /// before is being answered.
    private mutating func hold(_ messages: some Collection<TransferMessage>, first: Bool = false) throws(TransferError) {
        backlogCost += messages.reduce(0) { $0 + Self.cost(of: $1) }
        guard backlogCost <= Self.maxBacklogCost else { throw .tooFarAhead }
        if first { backlog.insert(contentsOf: messages, at: backlog.startIndex) } else { backlog.append(contentsOf: messages) }
    }

    /// Roughly the memory a waiting message holds.
    private static func cost(of message: TransferMessage) -> Int {
        switch message {
        case .data(let bytes): 64 + bytes.count
        case .zdata(_, let frame): 64 + frame.count
        case .batch(let messages): messages.reduce(0) { $0 + cost(of: $1) }
        default: 64
        }
    }

    /// Whether the sender of this connection has said goodbye.
    public var sessionEnded: Bool { ended }

    /// The extensions this receiver grants (what its extensions characteristic lists).
    public var grantable: TransferExtensions { grant.supported }

    /// What this receiver grants a sender that asks for `asked`.
    public func granting(_ asked: TransferExtensions) -> TransferExtensions { grant.granting(asked) }

    /// The extensions granted on the current connection.
    public var extensions: TransferExtensions { grant.granted }

    /// Partial transfers waiting for their senders or being received, on every connection that
    /// shares the ledger (for tests and leak checks).
    public var partialCount: Int { files.partialCount }

    /// Folders being received, on every connection that shares the ledger (for tests and leak checks).
    public var openTreeCount: Int { folders.count }

    /// A new connection from an authenticated sender opens with `opening` (handshake message 1:
    /// an offer, after a `hello` if the sender asks for extensions; with `folders` granted, a
    /// folder's `entry`, `folder` or `commit` instead of the offer). Returns the reply that rides
    /// in handshake message 2: the extensions granted (if asked), then the answer to the offer.
    public mutating func begin(sender: String, senderKey: [UInt8], opening: [TransferMessage], now: Instant) throws(TransferError) -> [TransferMessage] {
        self.sender = AuthenticatedSender(name: sender, key: senderKey)
        startAfresh()
        let hello = grant.begin(opening: opening).map { [$0] } ?? []
        guard opens(opening), let first = opening.last else { throw .unexpected(opening.last?.kind ?? .hello) }
        let replies = try receive(first, now: now)
        if replies.isEmpty, waitingFor != nil {
            // A folder item or a folder's commit whose work is out on another connection of this
            // sender: the answer waits for it (`openingWaits`), and message 2 with it.
            openingWaits = true
            return hello
        }
        guard replies.count == 1 else { throw .unexpected(first.kind) }
        return hello + replies
    }

    /// The opening's answer waits for storage work out on another connection: `begin` returned
    /// only the extensions granted, and the first reply of `handleTimers` answers the opening.
    public private(set) var openingWaits = false

    /// Whether `opening` can open a connection here (`begin`): one offer, after a `hello` if
    /// any; where `folders` is granted, also any item of a folder (a resume may start there).
    public func opens(_ opening: [TransferMessage]) -> Bool { grant.admitsOpening(opening) }

    /// The link is gone. Partial files and folders stay, waiting for a resume, until they expire;
    /// a file that holds no byte yet is removed at once (resuming it is the same as starting afresh).
    /// What other connections sharing the ledger are receiving is not touched.
    public mutating func connectionLost(now: Instant) {
        files.connectionLost(now: now)
        folders.connectionLost(of: sender.key, now: now)
        startAfresh()
    }

    /// The connection failed in a way only tampering or a misbehaving sender causes (a record that
    /// did not authenticate, a broken transfer rule): the file in progress is not kept for a
    /// resume. Its partial is removed and reported with `failure`.
    public mutating func abandonCurrent(because failure: FileFailure) {
        files.abandonCurrent(because: failure, from: sender, events: &pendingEvents)
        startAfresh()
        // Nothing this sender was building is kept either.
        folders.abandon(from: sender, because: failure, events: &pendingEvents)
    }

    /// Discards partial transfers whose senders have not come back in time; never one that a
    /// live connection sharing the ledger is receiving.
    public mutating func expirePartials(now: Instant) {
        files.expire(now: now)
        folders.expire(now: now)
    }

    /// Discards every partial transfer and folder (shutdown, interrupt), those of the other
    /// connections sharing the ledger too: what they still send of them is ignored.
    public mutating func discardAll() {
        files.discardAll()
        folders.discardAll()
        startAfresh()
    }

    /// Handles one message from the sender; returns the replies to send, in order.
    public mutating func receive(_ message: TransferMessage, now: Instant) throws(TransferError) -> [TransferMessage] {
        if isHolding {
            try hold([message])
            return []
        }
        guard grant.admits(message.kind) else { throw .unexpected(message.kind) }
        switch message {
        case .offer(let offer):
            return [try receiveOffer(offer, now: now)]
        case .entry(let entry):
            return [try receiveEntry(entry, now: now)]
        case .folder(let id, let tree, let path):
            try expectIdle(.folder)
            if try holds(message, whileOutElsewhere: sender.key(for: id), now: now) { return [] }
            return folders.folder(id, tree: tree, path: path, now: now, storage: &files.storage, from: sender, events: &pendingEvents)
                .map { [$0] } ?? []
        case .commit(let tree):
            try expectIdle(.commit)
            if try holds(message, whileOutElsewhere: sender.key(for: tree), now: now) { return [] }
            return folders.commit(tree, storage: &files.storage, from: sender, events: &pendingEvents).map { [$0] } ?? []
        case .data(let bytes):
            if try holds(message, whileOutElsewhere: files.current, now: now) { return [] }
            return try receiveChunk(.raw(bytes), now: now)
        case .zdata(let originalSize, let frame):
            if try holds(message, whileOutElsewhere: files.current, now: now) { return [] }
            return try receiveChunk(.compressed(originalSize: originalSize, frame: frame), now: now)
        case .done(let id, let hash):
            if try holds(message, whileOutElsewhere: files.current, now: now) { return [] }
            return try files.done(id, hash: hash, from: sender, events: &pendingEvents)
        case .bye:
            guard !files.isReceiving else { throw .unexpected(.bye) }
            files.becomeIdle()
            ended = true
            pendingEvents.append(.sessionEnded(sender: sender.name))
            return [.bye]
        case .batch(let messages):
            // As if each had come in its own record; the answers go back together too.
            var replies: [TransferMessage] = []
            for (index, message) in zip(messages.indices, messages) {
                if isHolding {
                    try hold(messages[index...], first: true)
                    break
                }
                replies += try receive(message, now: now)
            }
            return TransferMessage.packed(replies, limit: TransferConstants.maxBatchLength)
        case .accept, .ack, .confirm, .reject, .hello, .pending, .busy, .notTrusted:
            throw .unexpected(message.kind)
        }
    }

    // MARK: - Steps

    /// A single file: a new one, a resume, or one completed on an earlier connection. An
    /// unusable name costs that file alone: it is refused and the session goes on.
    private mutating func receiveOffer(_ offer: TransferMessage.Offer, now: Instant) throws(TransferError) -> TransferMessage {
        try expectIdle(.offer)
        let key = sender.key(for: offer.id)
        if let reply = files.recall(key, size: offer.size, now: now, from: sender, events: &pendingEvents) { return reply }
        guard let name = offer.name, let safe = safeFileName(name) else {
            return files.refuse(offer.id, name: "?", .badName, from: sender, events: &pendingEvents)
        }
        return files.start(key, size: offer.size, at: .store(name: safe), now: now, from: sender, events: &pendingEvents)
    }

    /// A file of a sent folder: flows like an offer, into its folder.
    private mutating func receiveEntry(_ entry: TransferMessage.Entry, now: Instant) throws(TransferError) -> TransferMessage {
        try expectIdle(.entry)
        let key = sender.key(for: entry.id)
        let done = folders.isDone(key, inTree: sender.key(for: entry.tree))
        if let reply = files.recall(key, size: entry.size, now: now, completedCounts: done, from: sender, events: &pendingEvents) { return reply }
        switch folders.place(entry, now: now, from: sender) {
        case .refused(let name, let reason):
            return files.refuse(entry.id, name: name, reason, from: sender, events: &pendingEvents)
        case .placed(let destination):
            return files.start(key, size: entry.size, at: destination, now: now, from: sender, events: &pendingEvents)
        }
    }

    private mutating func receiveChunk(_ chunk: IncomingChunk, now: Instant) throws(TransferError) -> [TransferMessage] {
        try files.receive(chunk, compressing: extensions.contains(.compression), now: now, from: sender, events: &pendingEvents)
    }

    /// Offers, folders and commits come only between files, and not after the goodbye.
    private mutating func expectIdle(_ kind: TransferMessage.Kind) throws(TransferError) {
        guard !ended, !files.isReceiving else { throw .unexpected(kind) }
        files.becomeIdle()
    }

    /// No file in progress on this connection, and no goodbye yet.
    private mutating func startAfresh() {
        files.becomeIdle()
        ended = false
        backlog.removeAll()
        backlogCost = 0
        waitingFor = nil
    }
}
