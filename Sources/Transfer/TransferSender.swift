/// The sending side of the transfer layer: offers files one after another, streams their bytes
/// within the transfer window, and resumes after a reconnect at the offset the receiver reports.
///
/// Pure state machine: it reads through the handed `FileSource`s and hashes through the handed
/// `ContentHasher`, and otherwise only turns messages into messages.
public struct TransferSender {
    public enum Event: Equatable, Sendable {
        case fileStarted(index: Int, name: String, size: UInt64?, resumedAt: UInt64)
        case progress(index: Int, sent: UInt64, acknowledged: UInt64)
        case fileSaved(index: Int, storedName: String, size: UInt64)
        case fileFailed(index: Int, FileFailure)
        case finished
    }

    private enum Phase: Equatable {
        case needOffer, awaitingAccept, sending, awaitingConfirm, byeSent, finished
    }

    private struct Outgoing {
        let source: any FileSource
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
    }

    private let sources: [any FileSource]
    private let makeHasher: () -> any ContentHasher
    private let makeID: () -> TransferID
    private var index = 0
    private var current: Outgoing?
    private var phase = Phase.needOffer
    private var pendingEvents: [Event] = []
    private var dataLimit = TransferConstants.maxDataPerRecord
    /// The extensions this sender can use; per connection, those it asked for and those granted.
    private let usable: TransferExtensions
    private var requested: TransferExtensions = []
    private var granted: TransferExtensions?
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

    /// - Parameters:
    ///   - files: what to send, in order.
    ///   - makeHasher: a fresh BLAKE2b-256 hasher per file.
    ///   - makeID: a fresh random transfer id per file.
    ///   - compressor: with it, the sender may ask for `compression` and compresses file chunks
    ///     that are worth it once the receiver grants it.
    public init(files: [any FileSource], makeHasher: @escaping () -> any ContentHasher, makeID: @escaping () -> TransferID,
                compressor: (any ChunkCompressor)? = nil) {
        self.sources = files
        self.makeHasher = makeHasher
        self.makeID = makeID
        self.compressor = compressor
        self.usable = compressor == nil ? [] : [.compression]
    }

    /// The extensions the receiver granted on this connection (none before its answer).
    public var extensions: TransferExtensions { granted ?? [] }

    public var isFinished: Bool { phase == .finished }

    /// Events since the last call, oldest first.
    public mutating func takeEvents() -> [Event] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// The messages that open a connection (they ride in handshake message 1): a `hello` asking
    /// for the extensions both this sender and the receiver (`receiverOffers`, from its extensions
    /// characteristic) can use, if any, then an offer for the current file, the same transfer id
    /// again when resuming.
    public mutating func openingMessages(receiverOffers: TransferExtensions = []) -> [TransferMessage] {
        requested = usable.intersection(receiverOffers)
        granted = nil
        let offer = openingOffer()
        return requested.isEmpty ? [offer] : [.hello(requested), offer]
    }

    private mutating func openingOffer() -> TransferMessage {
        switch phase {
        case .awaitingAccept, .sending, .awaitingConfirm:
            guard let current else { return nextOffer() }
            phase = .awaitingAccept
            return .offer(offer(for: current))
        case .needOffer, .byeSent, .finished:
            return nextOffer()
        }
    }

    /// The link is gone; the next connection resumes from what the receiver acknowledges.
    public mutating func connectionLost() {
        // Every file was confirmed and only the goodbye was missing (sent, or not yet): nothing is
        // left to do. Reconnecting would open with `bye`, which no receiver takes as an opening.
        if phase == .byeSent || (phase == .needOffer && index >= sources.count) { finish() }
    }

    /// The next message to send now, or `nil` if the window is full or we are waiting for the peer.
    public mutating func nextMessage() throws(TransferError) -> TransferMessage? {
        switch phase {
        case .needOffer:
            return nextOffer()
        case .sending:
            return try nextData()
        case .awaitingAccept, .awaitingConfirm, .byeSent, .finished:
            return nil
        }
    }

    /// Whether `nextMessage` could produce something now (without side effects).
    public var hasMessageReady: Bool {
        switch phase {
        case .needOffer: return true
        case .sending:
            guard let current else { return false }
            return current.nextOffset - current.acknowledged < TransferConstants.transferWindow || current.hash == nil
        default: return false
        }
    }

    public mutating func receive(_ message: TransferMessage) throws(TransferError) {
        switch message {
        case .accept(let id, let offset):
            guard phase == .awaitingAccept, var file = current, file.id == id else {
                throw .unexpected(.accept)
            }
            guard offset <= file.highestSent else { throw .cannotResume(offset: offset) }
            // A stream forgets what the receiver acknowledged; it cannot go back before that.
            if file.source.size == nil, offset < file.acknowledged { throw .cannotResume(offset: offset) }
            file.nextOffset = offset
            file.acknowledged = offset
            // The receiver's history starts afresh at every accept, so does ours.
            file.backlog = []
            compressor?.reset()
            let resumedAt = file.everAccepted ? offset : 0
            file.everAccepted = true
            current = file
            phase = .sending
            pendingEvents.append(.fileStarted(index: index, name: file.source.name, size: file.source.size, resumedAt: resumedAt))
        case .ack(let id, let received):
            guard phase == .sending || phase == .awaitingConfirm, var file = current, file.id == id else {
                throw .unexpected(.ack)
            }
            guard received <= file.highestSent else { throw .ackBeyondSent }
            if received > file.acknowledged {
                file.acknowledged = received
                file.source.release(before: received)
                current = file
                pendingEvents.append(.progress(index: index, sent: file.nextOffset, acknowledged: received))
            }
        case .confirm(let id, let status, let storedName):
            guard phase == .awaitingConfirm, let file = current, file.id == id else {
                throw .unexpected(.confirm)
            }
            switch status {
            case .saved:
                pendingEvents.append(.fileSaved(index: index, storedName: storedName, size: file.highestSent))
            case .hashMismatch:
                pendingEvents.append(.fileFailed(index: index, .integrity))
            case .couldNotStore:
                pendingEvents.append(.fileFailed(index: index, .couldNotStore("the receiver could not store the file")))
            }
            advance()
        case .reject(let id, let reason):
            guard [.awaitingAccept, .sending, .awaitingConfirm].contains(phase), let file = current, file.id == id else {
                throw .unexpected(.reject)
            }
            pendingEvents.append(.fileFailed(index: index, .rejected(reason)))
            advance()
        case .bye:
            guard phase == .byeSent else { throw .unexpected(.bye) }
            finish()
        case .hello(let offered):
            // Only in message 2, before the answer, and never more than was asked for.
            guard phase == .awaitingAccept, granted == nil, !requested.isEmpty, requested.isSuperset(of: offered) else {
                throw .unexpected(.hello)
            }
            granted = offered
        case .offer, .data, .done, .zdata:
            throw .unexpected(message.kind)
        }
    }

    // MARK: - Steps

    private mutating func nextOffer() -> TransferMessage {
        guard index < sources.count else {
            phase = .byeSent
            return .bye
        }
        let file = Outgoing(source: sources[index], id: makeID(), hasher: makeHasher())
        current = file
        phase = .awaitingAccept
        return .offer(offer(for: file))
    }

    private func offer(for file: Outgoing) -> TransferMessage.Offer {
        TransferMessage.Offer(id: file.id, size: file.source.size, name: file.source.name)
    }

    private mutating func nextData() throws(TransferError) -> TransferMessage? {
        guard var file = current else { return nil }
        guard file.nextOffset - file.acknowledged < TransferConstants.transferWindow else { return nil }
        if !file.backlog.isEmpty {
            let bytes = Array(file.backlog.prefix(dataLimit))
            file.backlog.removeFirst(bytes.count)
            current = file
            return sent(.data(bytes), fileBytes: bytes.count)
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
            throw .sourceFailed("\(error)")
        }
        guard bytes.count <= count else { throw .sourceFailed("read returned more than asked") }
        if bytes.isEmpty {
            if let size = file.source.size, file.nextOffset != size {
                throw .sourceFailed("\(file.source.name) became shorter while it was being sent")
            }
            if file.hash == nil {
                guard file.hashedUpTo == file.nextOffset else { throw .sourceFailed("hash state out of step") }
                file.hash = file.hasher.finalize()
            }
            let hash = file.hash ?? []
            current = file
            phase = .awaitingConfirm
            return .done(id: file.id, hash: hash)
        }
        // Bytes read again after a resume were hashed the first time round.
        let end = file.nextOffset + UInt64(bytes.count)
        if end > file.hashedUpTo {
            let fresh = Int(end - max(file.hashedUpTo, file.nextOffset))
            file.hasher.update(fresh == bytes.count ? bytes : Array(bytes.suffix(fresh)))
            file.hashedUpTo = end
        }
        file.highestSent = max(file.highestSent, end)
        current = file
        guard compressing else { return sent(.data(bytes), fileBytes: bytes.count) }
        if let frame = compressor?.compress(bytes) {
            return sent(.zdata(originalSize: bytes.count, frame: frame), fileBytes: bytes.count)
        }
        // Not worth compressing: the chunk goes raw, `dataLimit` bytes per message.
        current?.backlog = Array(bytes.dropFirst(dataLimit))
        return sent(.data(Array(bytes.prefix(dataLimit))), fileBytes: min(bytes.count, dataLimit))
    }

    /// Counts `message`, which carries the current file's next `fileBytes` bytes, as sent.
    private mutating func sent(_ message: TransferMessage, fileBytes: Int) -> TransferMessage {
        current?.nextOffset += UInt64(fileBytes)
        fileBytesSent += UInt64(fileBytes)
        switch message {
        case .data(let bytes): payloadBytesSent += UInt64(bytes.count)
        case .zdata(_, let frame): payloadBytesSent += UInt64(frame.count)
        default: break
        }
        return message
    }

    private mutating func advance() {
        index += 1
        current = nil
        phase = .needOffer
    }

    private mutating func finish() {
        guard phase != .finished else { return }
        phase = .finished
        pendingEvents.append(.finished)
    }
}
