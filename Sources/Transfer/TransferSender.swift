import DequeModule

/// The sending side of the transfer layer: offers files one after another, streams their bytes
/// within the transfer window, and resumes after a reconnect at the offset the receiver reports.
///
/// Where the receiver grants `pipelining` (docs/protocol.md §8.3), the next file's offer follows the
/// previous file's `done` at once, and a new file's data follows its offer without waiting for the
/// `accept`: many small files then cost no round trip each. Without it, each file waits for the
/// answer to its offer and the next offer for the previous file's `confirm` (§5).
///
/// Pure state machine: it reads through the handed `FileSource`s and hashes through the handed
/// `ContentHasher`, and otherwise only turns messages into messages.
public struct TransferSender {
    public enum Event: Equatable, Sendable {
        case fileStarted(index: Int, name: String, size: UInt64?, resumedAt: UInt64)
        case progress(index: Int, sent: UInt64, acknowledged: UInt64)
        case fileSaved(index: Int, storedName: String, size: UInt64)
        /// A folder item is in place: a folder of a tree inside the receiver's hidden copy, or, for
        /// a commit, the whole tree in the receiver's output folder under `storedName`.
        case folderSaved(index: Int, storedName: String)
        case fileFailed(index: Int, FileFailure)
        /// The receiver does not know this sender and asks its user (`pending`, §8.5): nothing
        /// goes until its answer.
        case awaitingApproval
        case finished
    }

    /// Files offered and not yet settled (`confirm` or `reject`) that one connection may hold.
    public static let maxFilesInFlight = 64

    /// One item from its first offer until the receiver settles it.
    private struct Outgoing {
        let index: Int
        let item: OutgoingItem
        /// The transfer id (a commit's: the tree id).
        let id: TransferID
        var hasher: any ContentHasher
        var hashedUpTo: UInt64 = 0
        var nextOffset: UInt64 = 0
        var highestSent: UInt64 = 0
        var acknowledged: UInt64 = 0
        var hash: [UInt8]?
        var everAccepted = false
        /// Bytes read (and hashed) that the compressor judged not worth compressing, still to go
        /// raw; they start at `nextOffset`.
        var backlog: [UInt8] = []
        // On the current connection:
        var offered = false
        var accepted = false
        /// Offered with its data following at once (a new file, pipelining): the receiver starts it at 0.
        var eager = false
        var doneSent = false

        /// A folder or a commit: settled by `confirm` or `reject` alone, nothing follows its offer.
        var carriesNoData: Bool { item.source == nil }
        var source: any FileSource { item.source ?? EmptySource.shared }

        /// Data may go now: the receiver said where to start, or it will start at 0.
        var mayStream: Bool { offered && !doneSent && (accepted || eager) }
        /// In flight on this connection and not finished sending (data or `done` still to go, or
        /// waiting for the `accept` that says where to start).
        var outstanding: Bool { offered && !doneSent }
    }

    private let items: [OutgoingItem]
    /// Trees that will not arrive (their top folder was refused, or the receiver takes no folders):
    /// the rest of their items are skipped.
    private var failedTrees: Set<TransferID> = []
    private let makeHasher: () -> any ContentHasher
    private let makeID: () -> TransferID
    /// The next file never offered.
    private var nextFresh = 0
    /// Offered and not yet settled, oldest first (the receiver answers in this order).
    private var unsettled: Deque<Outgoing> = []
    private var byeSent = false
    private var finished = false
    private var pendingEvents: [Event] = []
    private var dataLimit = TransferConstants.maxDataPerRecord
    /// The extensions this sender can use; per connection, those it asked for and those granted.
    private let usable: TransferExtensions
    private var requested: TransferExtensions = []
    private var granted: TransferExtensions?
    /// The receiver has answered something on this connection (a `hello` can only come first).
    private var answered = false
    /// On this connection: the receiver answered the opening offer (`accept` or `reject`), and
    /// before that, whether it said `pending` (its user decides about this sender).
    private var openingAnswered = false
    public private(set) var isAwaitingApproval = false
    private var compressor: (any ChunkCompressor)?
    /// File bytes handed to the link in `data` and `zdata`, and the bytes that carried them.
    public private(set) var fileBytesSent: UInt64 = 0
    public private(set) var payloadBytesSent: UInt64 = 0

    /// File bytes per `data` message (1...`maxDataPerRecord`): the session sizes records so that
    /// each fills whole frames of the link (`RecordSizing`).
    public var dataPerRecord: Int {
        get { dataLimit }
        set { dataLimit = min(max(newValue, 1), TransferConstants.maxDataPerRecord) }
    }

    /// Sends `files`, each under its base name.
    public init(files: [any FileSource], makeHasher: @escaping () -> any ContentHasher, makeID: @escaping () -> TransferID,
                compressor: (any ChunkCompressor)? = nil, pipelines: Bool = false) {
        self.init(items: files.map(OutgoingItem.file), makeHasher: makeHasher, makeID: makeID, compressor: compressor, pipelines: pipelines)
    }

    /// - Parameters:
    ///   - items: what to send, in order (a tree's items in tree order: `OutgoingItem`).
    ///   - makeHasher: a fresh BLAKE2b-256 hasher per file.
    ///   - makeID: a fresh random transfer id per file.
    ///   - compressor: with it, the sender may ask for `compression` and compresses file chunks
    ///     that are worth it once the receiver grants it.
    ///   - pipelines: ask for `pipelining`.
    public init(items: [OutgoingItem], makeHasher: @escaping () -> any ContentHasher, makeID: @escaping () -> TransferID,
                compressor: (any ChunkCompressor)? = nil, pipelines: Bool = false) {
        self.items = items
        self.makeHasher = makeHasher
        self.makeID = makeID
        self.compressor = compressor
        // Being asked about costs this sender nothing: it asks wherever a receiver offers it.
        var usable: TransferExtensions = [.firstContact]
        if compressor != nil { usable.insert(.compression) }
        if pipelines { usable.insert(.pipelining) }
        if items.contains(where: { $0.tree != nil }) { usable.insert(.folders) }
        self.usable = usable
    }

    /// The extensions the receiver granted on this connection (none before its answer).
    public var extensions: TransferExtensions { granted ?? [] }

    public var isFinished: Bool { finished }

    /// Events since the last call, oldest first.
    public mutating func takeEvents() -> [Event] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// The messages that open a connection (they ride in handshake message 1): a `hello` asking
    /// for the extensions both this sender and the receiver (`receiverOffers`, from its extensions
    /// characteristic) can use, if any, then an offer: the oldest file not yet settled again (same
    /// transfer id: a resume), or the next file. Nothing if nothing is left that this receiver
    /// can take (only folders, and it takes none): the sender is then finished.
    public mutating func openingMessages(receiverOffers: TransferExtensions = []) -> [TransferMessage] {
        requested = usable.intersection(receiverOffers)
        granted = nil
        answered = false
        openingAnswered = false
        isAwaitingApproval = false
        guard let offer = nextOffer(eager: false, allowed: requested) else {
            finish()
            return []
        }
        return requested.isEmpty ? [offer] : [.hello(requested), offer]
    }

    /// The link is gone; the next connection re-offers every file not yet settled, oldest first,
    /// and resumes each from what the receiver holds.
    public mutating func connectionLost() {
        for i in unsettled.indices {
            unsettled[i].offered = false
            unsettled[i].accepted = false
            unsettled[i].eager = false
            unsettled[i].doneSent = false
            unsettled[i].backlog = []
        }
        granted = nil
        answered = false
        openingAnswered = false
        isAwaitingApproval = false
        // Every file was settled and only the goodbye was missing (sent, or not yet): nothing is
        // left to do. Reconnecting would open with `bye`, which no receiver takes as an opening.
        if unsettled.isEmpty && nextFresh >= items.count { finish() }
    }

    /// The next message to send now, or `nil` if the window is full or we are waiting for the peer.
    public mutating func nextMessage() throws(TransferError) -> TransferMessage? {
        guard !finished, !byeSent else { return nil }
        if let i = streamingIndex { return try nextData(i) }
        guard mayOffer else { return nil }
        if let offer = nextOffer(eager: extensions.contains(.pipelining), allowed: extensions) { return offer }
        guard unsettled.isEmpty else { return nil }
        byeSent = true
        return .bye
    }

    /// Whether `nextMessage` could produce something now (without side effects).
    public var hasMessageReady: Bool {
        guard !finished, !byeSent else { return false }
        if let i = streamingIndex { return windowOpen || unsettled[i].hash == nil }
        return mayOffer && (unsettled.contains { !$0.offered } || nextFresh < items.count || unsettled.isEmpty)
    }

    public mutating func receive(_ message: TransferMessage) throws(TransferError) {
        defer { answered = true }
        if case .accept = message { answerOpening() }
        switch message {
        case .accept(let id, let offset):
            // Answers come in the order of the offers.
            guard let i = unsettled.firstIndex(where: { $0.offered && !$0.accepted }), unsettled[i].id == id else {
                throw .unexpected(.accept)
            }
            var file = unsettled[i]
            if file.eager {
                // Its data is on the way from byte 0: only a fresh start fits.
                guard offset == 0 else { throw .cannotResume(offset: offset) }
            } else {
                guard offset <= file.highestSent else { throw .cannotResume(offset: offset) }
                // A stream forgets what the receiver acknowledged; it cannot go back before that.
                if file.source.size == nil, offset < file.acknowledged { throw .cannotResume(offset: offset) }
                file.nextOffset = offset
                file.acknowledged = offset
                // The receiver's history starts afresh at every accept, so does ours.
                file.backlog = []
                compressor?.reset()
            }
            let resumedAt = file.everAccepted ? offset : 0
            file.everAccepted = true
            file.accepted = true
            unsettled[i] = file
            pendingEvents.append(.fileStarted(index: file.index, name: file.source.name, size: file.source.size, resumedAt: resumedAt))
        case .ack(let id, let received):
            guard let i = unsettled.firstIndex(where: { $0.accepted && $0.id == id }) else { throw .unexpected(.ack) }
            guard received <= unsettled[i].highestSent else { throw .ackBeyondSent }
            if received > unsettled[i].acknowledged {
                unsettled[i].acknowledged = received
                unsettled[i].source.release(before: received)
                pendingEvents.append(.progress(index: unsettled[i].index, sent: unsettled[i].nextOffset, acknowledged: received))
            }
        case .confirm(let id, let status, let storedName):
            guard let file = unsettled.first, file.id == id, file.accepted, file.doneSent else {
                throw .unexpected(.confirm)
            }
            unsettled.removeFirst()
            let event: Event
            switch (status, file.carriesNoData) {
            case (.saved, false): event = .fileSaved(index: file.index, storedName: storedName, size: file.highestSent)
            case (.saved, true): event = .folderSaved(index: file.index, storedName: storedName)
            case (.hashMismatch, _): event = .fileFailed(index: file.index, .integrity)
            case (.couldNotStore, _): event = .fileFailed(index: file.index, .receiverCouldNotStore)
            }
            report(event, for: file)
            file.source.release(before: .max)
        case .reject(let id, .notApproved):
            // Only as the answer to the opening that was `pending`: the connection ends.
            guard isAwaitingApproval, unsettled.first?.id == id else { throw .unexpected(.reject) }
            throw .notApproved
        case .reject(let id, let reason):
            answerOpening()
            // For an offer, or a file whose storing failed; its remaining data and `done` are ignored.
            guard let file = unsettled.first, file.id == id, file.offered else { throw .unexpected(.reject) }
            unsettled.removeFirst()
            report(.fileFailed(index: file.index, .rejected(reason)), for: file)
            // A refused top folder takes its tree with it: the rest is not sent.
            if file.item.opensTree, let tree = file.item.tree { failedTrees.insert(tree) }
            file.source.release(before: .max)
        case .bye:
            guard byeSent else { throw .unexpected(.bye) }
            finish()
        case .hello(let offered):
            // Only in message 2, before the answer, and never more than was asked for.
            guard granted == nil, !answered, !requested.isEmpty, requested.isSuperset(of: offered) else {
                throw .unexpected(.hello)
            }
            granted = offered
            return
        case .pending:
            // Only in message 2, right after a `hello` that granted `firstContact`.
            guard extensions.contains(.firstContact), !openingAnswered, !isAwaitingApproval else { throw .unexpected(.pending) }
            isAwaitingApproval = true
            pendingEvents.append(.awaitingApproval)
        case .batch(let messages):
            guard extensions.contains(.pipelining) else { throw .unexpected(.batch) }
            for message in messages { try receive(message) }
        case .offer, .data, .done, .zdata, .folder, .entry, .commit:
            throw .unexpected(message.kind)
        }
    }

    /// The receiver answered the opening offer: no `pending` may come after this.
    private mutating func answerOpening() {
        openingAnswered = true
        isAwaitingApproval = false
    }

    // MARK: - Steps

    /// The file whose data (or `done`) goes next: the one offered file not finished sending, once
    /// it may stream.
    private var streamingIndex: Int? {
        guard let i = unsettled.lastIndex(where: { $0.offered }), unsettled[i].mayStream else { return nil }
        return i
    }

    /// Whether the next offer may go now: nothing offered on this connection is still being sent
    /// or waiting for its `accept`, and either nothing is in flight or the receiver takes pipelined
    /// offers.
    private var mayOffer: Bool {
        guard !unsettled.contains(where: \.outstanding) else { return false }
        let inFlight = unsettled.count { $0.offered }
        return inFlight == 0 || (extensions.contains(.pipelining) && inFlight < Self.maxFilesInFlight)
    }

    /// File bytes sent and not yet acknowledged, over every file in flight.
    private var windowOpen: Bool {
        var unacknowledged: UInt64 = 0
        for file in unsettled where file.offered { unacknowledged += file.nextOffset - file.acknowledged }
        return unacknowledged < TransferConstants.transferWindow
    }

    /// Offers the oldest unsettled item not yet offered on this connection (a resume: a file waits
    /// for its `accept`), else the next new item (`eager`: a file's data follows at once); nil if
    /// none. Items of a tree go only where `allowed` has `folders`; a tree that cannot go is
    /// reported once and skipped.
    private mutating func nextOffer(eager: Bool, allowed: TransferExtensions) -> TransferMessage? {
        if let i = unsettled.firstIndex(where: { !$0.offered }) {
            unsettled[i].offered = true
            if unsettled[i].carriesNoData { markSentWhole(i) }
            return opening(for: unsettled[i])
        }
        while nextFresh < items.count {
            let item = items[nextFresh]
            let index = nextFresh
            if let tree = item.tree {
                if failedTrees.contains(tree) {
                    nextFresh += 1
                    continue
                }
                guard allowed.contains(.folders) else {
                    failedTrees.insert(tree)
                    pendingEvents.append(.fileFailed(index: index, .foldersNotSupported))
                    nextFresh += 1
                    continue
                }
            }
            nextFresh += 1
            let id: TransferID
            if case .commit(let tree, _) = item { id = tree } else { id = makeID() }
            var file = Outgoing(index: index, item: item, id: id, hasher: makeHasher())
            file.offered = true
            if eager && !file.carriesNoData {
                file.eager = true
                compressor?.reset()
            }
            unsettled.append(file)
            if file.carriesNoData { markSentWhole(unsettled.count - 1) }
            return opening(for: file)
        }
        return nil
    }

    /// A folder or a commit is whole once sent: it waits only for its `confirm`.
    private mutating func markSentWhole(_ i: Int) {
        unsettled[i].accepted = true
        unsettled[i].doneSent = true
    }

    /// The message that offers `file`.
    private func opening(for file: Outgoing) -> TransferMessage {
        switch file.item {
        case .file(let source):
            .offer(TransferMessage.Offer(id: file.id, size: source.size, name: source.name))
        case .treeFile(let tree, let path, let executable, let source):
            .entry(TransferMessage.Entry(id: file.id, tree: tree, size: source.size, executable: executable, path: path))
        case .folder(let tree, let path):
            .folder(id: file.id, tree: tree, path: path)
        case .commit(let tree, _):
            .commit(tree: tree)
        }
    }

    /// Reports what became of `file`, except the items of a tree already reported as failed.
    private mutating func report(_ event: Event, for file: Outgoing) {
        if let tree = file.item.tree, failedTrees.contains(tree), !file.item.opensTree { return }
        pendingEvents.append(event)
    }

    private mutating func nextData(_ i: Int) throws(TransferError) -> TransferMessage? {
        var file = unsettled[i]
        guard windowOpen else { return nil }
        if !file.backlog.isEmpty {
            let bytes = Array(file.backlog.prefix(dataLimit))
            file.backlog.removeFirst(bytes.count)
            unsettled[i] = file
            return sent(.data(bytes), fileBytes: bytes.count, file: i)
        }
        let compressing = extensions.contains(.compression) && compressor != nil
        var count = compressing ? TransferConstants.maxCompressedChunk : dataLimit
        if let size = file.source.size {
            count = Int(min(UInt64(count), size &- min(size, file.nextOffset)))
        }
        let bytes: [UInt8]
        do {
            bytes = count > 0 ? try file.source.read(at: file.nextOffset, count: count) : []
        } catch {
            throw .sourceFailed(FileSourceError(.unreadable, name: file.source.name, cause: StorageError(adapting: error)))
        }
        guard bytes.count <= count else { throw .sourceFailed(FileSourceError(.readTooMuch, name: file.source.name)) }
        if bytes.isEmpty {
            if let size = file.source.size, file.nextOffset != size {
                throw .sourceFailed(FileSourceError(.shrank, name: file.source.name))
            }
            if file.hash == nil {
                guard file.hashedUpTo == file.nextOffset else { throw .sourceFailed(FileSourceError(.hashOutOfStep, name: file.source.name)) }
                file.hash = file.hasher.finalize()
            }
            file.doneSent = true
            unsettled[i] = file
            return .done(id: file.id, hash: file.hash ?? [])
        }
        // Bytes read again after a resume were hashed the first time round.
        let end = file.nextOffset + UInt64(bytes.count)
        if end > file.hashedUpTo {
            let fresh = Int(end - max(file.hashedUpTo, file.nextOffset))
            file.hasher.update(fresh == bytes.count ? bytes : Array(bytes.suffix(fresh)))
            file.hashedUpTo = end
        }
        file.highestSent = max(file.highestSent, end)
        unsettled[i] = file
        guard compressing else { return sent(.data(bytes), fileBytes: bytes.count, file: i) }
        if let frame = compressor?.compress(bytes) {
            return sent(.zdata(originalSize: bytes.count, frame: frame), fileBytes: bytes.count, file: i)
        }
        // Not worth compressing: the chunk goes raw, `dataLimit` bytes per message.
        unsettled[i].backlog = Array(bytes.dropFirst(dataLimit))
        return sent(.data(Array(bytes.prefix(dataLimit))), fileBytes: min(bytes.count, dataLimit), file: i)
    }

    /// Counts `message`, which carries the next `fileBytes` bytes of file `i`, as sent.
    private mutating func sent(_ message: TransferMessage, fileBytes: Int, file i: Int) -> TransferMessage {
        unsettled[i].nextOffset += UInt64(fileBytes)
        fileBytesSent += UInt64(fileBytes)
        switch message {
        case .data(let bytes): payloadBytesSent += UInt64(bytes.count)
        case .zdata(_, let frame): payloadBytesSent += UInt64(frame.count)
        default: break
        }
        return message
    }

    private mutating func finish() {
        guard !finished else { return }
        finished = true
        pendingEvents.append(.finished)
    }
}
