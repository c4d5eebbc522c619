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
    }

    private let sources: [any FileSource]
    private let makeHasher: () -> any ContentHasher
    private let makeID: () -> TransferID
    private var index = 0
    private var current: Outgoing?
    private var phase = Phase.needOffer
    private var pendingEvents: [Event] = []
    private var dataLimit = TransferConstants.maxDataPerRecord

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
    public init(files: [any FileSource], makeHasher: @escaping () -> any ContentHasher, makeID: @escaping () -> TransferID) {
        self.sources = files
        self.makeHasher = makeHasher
        self.makeID = makeID
    }

    public var isFinished: Bool { phase == .finished }

    /// Events since the last call, oldest first.
    public mutating func takeEvents() -> [Event] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// The message that opens a connection (it rides in handshake message 1): an offer for the
    /// current file, the same transfer id again when resuming.
    public mutating func openingMessage() -> TransferMessage {
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
        case .offer, .data, .done:
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
        var count = dataLimit
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
        file.nextOffset = end
        file.highestSent = max(file.highestSent, end)
        current = file
        return .data(bytes)
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
