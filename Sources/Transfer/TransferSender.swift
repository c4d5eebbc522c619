/// The sending side of the transfer layer: offers files one after another, streams their bytes
/// within the transfer window, and resumes after a reconnect at the offset the receiver reports.
///
/// Where the receiver grants `pipelining` (docs/protocol.md §8.3), the next file's offer follows the
/// previous file's `done` at once, and a new file's data follows its offer without waiting for the
/// `accept`: many small files then cost no round trip each. Without it, each file waits for the
/// answer to its offer and the next offer for the previous file's `confirm` (§5).
///
/// Pure state machine: it reads through the handed `FileSource`s and hashes through the handed
/// `ContentHasher`, and otherwise only turns messages into messages. A coordinator: a
/// `FolderWalker` hands out the items in order, an `OfferWindow` holds those offered and not
/// settled, a `FileStreamer` sends the bytes of the one streaming, an `ExtensionRequest` holds
/// what was asked for and granted on this connection.
public struct TransferSender {
    public enum Event: Equatable, Sendable {
        case fileStarted(index: Int, name: String, size: UInt64?, resumedAt: UInt64)
        case progress(index: Int, sent: UInt64, acknowledged: UInt64)
        /// `airBytes`: the file data this sender put on the air for it (compressed or not, resent
        /// bytes included), on every connection of this run.
        case fileSaved(index: Int, storedName: String, size: UInt64, hash: [UInt8], airBytes: UInt64)
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

    private var walker: FolderWalker
    private var window = OfferWindow()
    private var streamer: FileStreamer
    private var request: ExtensionRequest
    private let makeHasher: () -> any ContentHasher
    private var byeSent = false
    private var finished = false
    private var pendingEvents: [Event] = []

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
        walker = FolderWalker(items: items, makeID: makeID, makeHasher: makeHasher)
        streamer = FileStreamer(encoder: ChunkEncoder(compressor: compressor))
        self.makeHasher = makeHasher
        // Being asked about, told to come back later, or told plainly that the receiver does not
        // trust us costs this sender nothing: it asks for each wherever a receiver offers it.
        var usable: TransferExtensions = [.firstContact, .busy, .notTrusted]
        if compressor != nil { usable.insert(.compression) }
        if pipelines { usable.insert(.pipelining) }
        if walker.hasFolders { usable.insert(.folders) }
        request = ExtensionRequest(usable: usable)
    }

    /// File bytes handed to the link in `data` and `zdata`, and the bytes that carried them.
    public var fileBytesSent: UInt64 { streamer.fileBytesSent }
    public var payloadBytesSent: UInt64 { streamer.payloadBytesSent }

    /// File bytes per `data` message (1...`maxDataPerRecord`): the session sizes records so that
    /// each fills whole frames of the link (`RecordSizing`).
    public var dataPerRecord: Int {
        get { streamer.dataPerRecord }
        set { streamer.dataPerRecord = newValue }
    }

    /// The extensions the receiver granted on this connection (none before its answer).
    public var extensions: TransferExtensions { request.extensions }

    /// The receiver's user is being asked about this sender (`pending`).
    public var isAwaitingApproval: Bool { request.isAwaitingApproval }

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
        let requested = request.open(receiverOffers: receiverOffers)
        guard let offer = nextOffer(eager: false, allowed: requested) else {
            finish()
            return []
        }
        return requested.isEmpty ? [offer] : [.hello(requested), offer]
    }

    /// The link is gone; the next connection re-offers every file not yet settled, oldest first,
    /// and resumes each from what the receiver holds.
    public mutating func connectionLost() {
        window.connectionLost()
        streamer.connectionLost()
        request.connectionLost()
        // Every file was settled and only the goodbye was missing (sent, or not yet): nothing is
        // left to do. Reconnecting would open with `bye`, which no receiver takes as an opening.
        if window.isEmpty && walker.isExhausted { finish() }
    }

    /// The next message to send now, or `nil` if the window is full or we are waiting for the peer.
    public mutating func nextMessage() throws(TransferError) -> TransferMessage? {
        guard !finished, !byeSent else { return nil }
        if let i = window.streamingIndex {
            guard window.isOpen else { return nil }
            return try streamer.next(for: &window[i], compressing: extensions.contains(.compression))
        }
        guard window.mayOffer(pipelining: extensions.contains(.pipelining)) else { return nil }
        if let offer = nextOffer(eager: extensions.contains(.pipelining), allowed: extensions) { return offer }
        guard window.isEmpty else { return nil }
        byeSent = true
        return .bye
    }

    /// Whether `nextMessage` could produce something now (without side effects).
    public var hasMessageReady: Bool {
        guard !finished, !byeSent else { return false }
        if let i = window.streamingIndex { return window.isOpen || window[i].hash.digest == nil }
        return window.mayOffer(pipelining: extensions.contains(.pipelining))
            && (window.hasUnoffered || !walker.isExhausted || window.isEmpty)
    }

    public mutating func receive(_ message: TransferMessage) throws(TransferError) {
        defer { request.heardFromReceiver() }
        if case .accept = message { request.openingWasAnswered() }
        switch message {
        case .accept(let id, let offset):
            let (file, resumedAt) = try window.accept(id, offset: offset)
            // The receiver's history starts afresh at every accept, so does ours (data that
            // followed an eager offer started it afresh already).
            if !file.link.eager { streamer.restart() }
            pendingEvents.append(.fileStarted(index: file.index, name: file.source.name, size: file.source.size, resumedAt: resumedAt))
        case .ack(let id, let received):
            if let file = try window.ack(id, received: received) {
                pendingEvents.append(.progress(index: file.index, sent: file.nextOffset, acknowledged: received))
            }
        case .confirm(let id, let status, let storedName):
            let file = try window.confirm(id)
            let event: Event
            switch (status, file.carriesNoData) {
            case (.saved, false): event = .fileSaved(index: file.index, storedName: storedName, size: file.highestSent, hash: file.hash.digest ?? [], airBytes: file.airBytes)
            case (.saved, true): event = .folderSaved(index: file.index, storedName: storedName)
            case (.hashMismatch, _): event = .fileFailed(index: file.index, .integrity)
            case (.couldNotStore, _): event = .fileFailed(index: file.index, .receiverCouldNotStore)
            }
            report(event, for: file)
            file.source.release(before: .max)
        case .reject(let id, .notApproved):
            // Only as the answer to the opening that was `pending`: the connection ends.
            guard request.isAwaitingApproval, window.first?.id == id else { throw .unexpected(.reject) }
            throw .notApproved
        case .reject(let id, let reason):
            request.openingWasAnswered()
            let file = try window.reject(id)
            report(.fileFailed(index: file.index, .rejected(reason)), for: file)
            walker.refused(file.item)
            file.source.release(before: .max)
        case .bye:
            guard byeSent else { throw .unexpected(.bye) }
            finish()
        case .hello(let offered):
            try request.receiveHello(offered)
        case .pending:
            try request.receivePending()
            pendingEvents.append(.awaitingApproval)
        case .busy(let retryAfter, let ahead):
            try request.checkBusy()
            throw .receiverBusy(retryAfterSeconds: retryAfter, ahead: ahead)
        case .notTrusted:
            try request.checkNotTrusted()
            throw .notTrusted
        case .batch(let messages):
            guard extensions.contains(.pipelining) else { throw .unexpected(.batch) }
            for message in messages { try receive(message) }
        case .offer, .data, .done, .zdata, .folder, .entry, .commit:
            throw .unexpected(message.kind)
        }
    }

    // MARK: - Steps

    /// Offers the oldest unsettled item not yet offered on this connection (a resume: a file waits
    /// for its `accept`), else the next new item (`eager`: a file's data follows at once); nil if
    /// none. Items of a tree go only where `allowed` has `folders`.
    private mutating func nextOffer(eager: Bool, allowed: TransferExtensions) -> TransferMessage? {
        if let file = window.reoffer() { return file.offer }
        guard let next = walker.nextItem(allowed: allowed, events: &pendingEvents) else { return nil }
        var file = Outgoing(index: next.index, item: next.item, id: next.id, hash: RunningHash(makeHasher()))
        file.link.offered = true
        if file.carriesNoData {
            file.markSentWhole()
        } else if eager && !file.resumesEarlierRun {
            file.link.eager = true
            streamer.restart()
        }
        window.append(file)
        return file.offer
    }

    /// Reports what became of `file`, except the items of a tree already reported as failed.
    private mutating func report(_ event: Event, for file: Outgoing) {
        if walker.reports(file.item) { pendingEvents.append(event) }
    }

    private mutating func finish() {
        guard !finished else { return }
        finished = true
        pendingEvents.append(.finished)
    }
}
