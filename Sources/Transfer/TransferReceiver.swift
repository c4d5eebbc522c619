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
    public init(store: any FileStore, makeHasher: @escaping () -> any ContentHasher,
                maxFileSize: UInt64 = 1 << 40, partialLifetime: Duration = .seconds(600),
                maxPartialsPerSender: Int = 4, decompressor: (any ChunkDecompressor)? = nil) {
        // Pipelined offers need nothing more of this receiver: it answers every message in order.
        self.supported = decompressor == nil ? [.pipelining] : [.compression, .pipelining]
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

    /// Partial transfers waiting for their senders (for tests and leak checks).
    public var partialCount: Int { partials.count }

    /// A new connection from an authenticated sender opens with `opening` (handshake message 1:
    /// an offer, after a `hello` if the sender asks for extensions). Returns the reply that rides
    /// in handshake message 2: the extensions granted (if asked), then the answer to the offer.
    public mutating func begin(sender: String, senderKey: [UInt8], opening: [TransferMessage], now: Instant) throws(TransferError) -> [TransferMessage] {
        self.sender = sender
        self.senderKey = senderKey
        current = .none
        extensions = []
        var hello: [TransferMessage] = []
        var offer = opening[...]
        if case .hello(let asked) = offer.first {
            extensions = asked.intersection(supported)
            hello = [.hello(extensions)]
            offer = offer.dropFirst()
        }
        guard offer.count == 1, let first = offer.first, case .offer = first else { throw .unexpected(offer.first?.kind ?? .hello) }
        let replies = try receive(first, now: now)
        guard replies.count == 1 else { throw .unexpected(.offer) }
        return hello + replies
    }

    /// The link is gone. Partial files stay, waiting for a resume, until they expire; one that
    /// holds no byte yet is removed at once (resuming it is the same as starting afresh).
    public mutating func connectionLost(now: Instant) {
        if case .receiving(let key) = current, let partial = partials[key] {
            if partial.received == 0 {
                partials.discard(key)
            } else {
                partials[key]?.lastActivity = now
            }
        }
        current = .none
    }

    /// The connection failed in a way only tampering or a misbehaving sender causes (a record that
    /// did not authenticate, a broken transfer rule): the file in progress is not kept for a
    /// resume. Its partial is removed and reported with `failure`.
    public mutating func abandonCurrent(because failure: FileFailure) {
        if case .receiving(let key) = current { fail(key, failure) }
        current = .none
    }

    /// Discards partial transfers whose senders have not come back in time.
    public mutating func expirePartials(now: Instant) {
        if case .receiving(let active) = current {
            partials.expire(now: now, keeping: active)
        } else {
            partials.expire(now: now, keeping: nil)
        }
    }

    /// Discards every partial transfer (shutdown, interrupt).
    public mutating func discardAll() {
        partials.discardAll()
        current = .none
    }

    /// Handles one message from the sender; returns the replies to send, in order.
    public mutating func receive(_ message: TransferMessage, now: Instant) throws(TransferError) -> [TransferMessage] {
        switch message {
        case .offer(let offer):
            return [try handleOffer(offer, now: now)]
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
        case .accept, .ack, .confirm, .reject, .hello:
            throw .unexpected(message.kind)
        }
    }

    // MARK: - Steps

    private mutating func handleOffer(_ offer: TransferMessage.Offer, now: Instant) throws(TransferError) -> TransferMessage {
        switch current {
        case .none, .ignoring, .completed: break
        case .receiving: throw .unexpected(.offer)
        case .ended: throw .unexpected(.offer)
        }
        let key = Key(senderKey: senderKey, id: offer.id)
        // The sender's history starts afresh at every accept, so does ours.
        decompressor?.reset()
        if let done = completed[key] {
            current = .completed(key)
            return .accept(id: offer.id, offset: done.size)
        }
        if let partial = partials[key], partial.size == offer.size {
            // A resume: the file keeps the name it was first offered under.
            partials[key]?.lastActivity = now
            current = .receiving(key)
            pendingEvents.append(.fileStarted(sender: sender, name: partial.name, size: partial.size, resumedAt: partial.received))
            return .accept(id: offer.id, offset: partial.received)
        }
        // The same id with another size is another file: start it afresh.
        partials.discard(key)
        // Every unusable name (not UTF-8, empty, nothing left after the name policy) costs that
        // file alone: it is rejected and the session goes on.
        guard let offered = offer.name, let name = safeFileName(offered) else {
            current = .ignoring(offer.id)
            pendingEvents.append(.fileFailed(sender: sender, name: "?", .rejected(.badName)))
            return .reject(id: offer.id, reason: .badName)
        }
        if let size = offer.size, size > maxFileSize {
            current = .ignoring(offer.id)
            pendingEvents.append(.fileFailed(sender: sender, name: name, .rejected(.tooLarge)))
            return .reject(id: offer.id, reason: .tooLarge)
        }
        let file: any IncomingFile
        do {
            file = try store.begin(name: name, size: offer.size, sender: sender)
        } catch {
            current = .ignoring(offer.id)
            let tooLarge = (error as? StorageError)?.code == .tooLarge || (error as? StorageError)?.code == .noSpace
            pendingEvents.append(.fileFailed(sender: sender, name: name, .couldNotStore(Self.describe(error))))
            return .reject(id: offer.id, reason: tooLarge ? .tooLarge : .couldNotStore)
        }
        partials.insert(.init(name: name, size: offer.size, file: file, hasher: makeHasher(), lastActivity: now), for: key)
        current = .receiving(key)
        pendingEvents.append(.fileStarted(sender: sender, name: name, size: offer.size, resumedAt: 0))
        return .accept(id: offer.id, offset: 0)
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
                    let error = ChunkDecompressionError(code: "sizeMismatch")
                    fail(key, .senderBrokeProtocol(.decompressionFailed(error)))
                    throw .decompressionFailed(error)
                }
            }
            do {
                try partial.file.write(bytes, at: partial.received)
            } catch {
                fail(key, .couldNotStore(Self.describe(error)))
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
                fail(key, .couldNotStore(Self.describe(error)))
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

    private static func describe(_ error: any Error) -> String {
        (error as? StorageError)?.detail ?? "\(error)"
    }
}
