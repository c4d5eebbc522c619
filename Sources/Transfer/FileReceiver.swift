import Pipeline

/// The receiver's files, one at a time from its offer (or `entry`) to its commit: writes the data
/// through the `FileStore` (or the folder it belongs to), checks the whole-file hash, and commits
/// only then. Files whose links dropped wait in `PartialTransfers` for their sender to resume;
/// completed ones are remembered, so a sender that missed its `confirm` gets it again.
struct FileReceiver {
    typealias Key = PartialTransfers.Key
    typealias Event = TransferReceiver.Event

    /// Where the current file stands on this connection.
    enum Phase {
        /// Between files.
        case idle
        case receiving(Key)
        /// Offered again after it was completed: only its `done` may follow.
        case completed(Key)
        /// The offer was refused or storing failed: its remaining data is ignored until `done`.
        case ignoring(TransferID)
    }

    /// Where a new file goes.
    enum Destination {
        /// A single file, into the `FileStore`, under its sanitised name.
        case store(name: String)
        /// A file of a sent folder: `path` for people, `below` the top folder of `tree`.
        case tree(path: String, any IncomingTree, below: [String], executable: Bool)

        var name: String {
            switch self {
            case .store(let name), .tree(let name, _, _, _): name
            }
        }
    }

    private let store: any FileStore
    private let makeHasher: () -> any ContentHasher
    private let maxFileSize: UInt64
    private var chunks: ChunkDecoder
    private var partials: PartialTransfers
    private var completed = CompletedTransfers()
    private(set) var phase = Phase.idle

    init(store: any FileStore, makeHasher: @escaping () -> any ContentHasher, maxFileSize: UInt64,
         chunks: ChunkDecoder, partials: PartialTransfers) {
        self.store = store
        self.makeHasher = makeHasher
        self.maxFileSize = maxFileSize
        self.chunks = chunks
        self.partials = partials
    }

    var partialCount: Int { partials.count }

    var isReceiving: Bool {
        if case .receiving = phase { return true }
        return false
    }

    /// Between files: an offer, a folder item or a goodbye came.
    mutating func becomeIdle() { phase = .idle }

    // MARK: - Offers

    /// The first half of an offer of `key`: answers it at once if the file was completed (its
    /// `confirm` was lost) or is a resume (same size), else forgets any partial of that id
    /// (another size: another file) and returns nil, so the caller checks the name and `start`s it.
    mutating func recall(_ key: Key, size: UInt64?, now: Instant, from sender: AuthenticatedSender,
                         events: inout [Event]) -> TransferMessage? {
        // The sender's history starts afresh at every accept, so does ours.
        chunks.reset()
        if let done = completed[key] {
            phase = .completed(key)
            return .accept(id: key.id, offset: done.size)
        }
        if let partial = partials[key], partial.size == size {
            // A resume: the file keeps the name it was first offered under.
            partials[key]?.lastActivity = now
            phase = .receiving(key)
            events.append(.fileStarted(sender: sender.name, name: partial.name, size: partial.size, resumedAt: partial.received))
            return .accept(id: key.id, offset: partial.received)
        }
        partials.discard(key)
        return nil
    }

    /// The second half: a new file of `size` bytes (nil: a stream) at `destination`.
    mutating func start(_ key: Key, size: UInt64?, at destination: Destination, now: Instant,
                        from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let name = destination.name
        if let size, size > maxFileSize {
            return refuse(key.id, name: name, .tooLarge, from: sender, events: &events)
        }
        let file: any IncomingFile
        do {
            switch destination {
            case .store(let name): file = try store.begin(name: name, size: size, sender: sender.name)
            case .tree(_, let tree, let below, let executable): file = try tree.beginFile(below, size: size, executable: executable)
            }
        } catch {
            let error = StorageError(adapting: error)
            if error.code == .exists { return refuse(key.id, name: name, .exists, from: sender, events: &events) }
            phase = .ignoring(key.id)
            events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
            return .reject(id: key.id, reason: error.code == .tooLarge || error.code == .noSpace ? .tooLarge : .couldNotStore)
        }
        partials.insert(.init(name: name, size: size, file: file, hasher: makeHasher(), lastActivity: now), for: key)
        phase = .receiving(key)
        events.append(.fileStarted(sender: sender.name, name: name, size: size, resumedAt: 0))
        return .accept(id: key.id, offset: 0)
    }

    /// Refuses the file `id` for `reason` and reports it; its data is ignored until its `done`.
    mutating func refuse(_ id: TransferID, name: String, _ reason: TransferMessage.RejectReason,
                         from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        phase = .ignoring(id)
        events.append(.fileFailed(sender: sender.name, name: name, .rejected(reason)))
        return .reject(id: id, reason: reason)
    }

    // MARK: - Data and done

    /// A chunk of the current file; `compressing`: compression is granted on this connection.
    mutating func receive(_ chunk: IncomingChunk, compressing: Bool, now: Instant,
                          from sender: AuthenticatedSender, events: inout [Event]) throws(TransferError) -> [TransferMessage] {
        switch phase {
        case .ignoring:
            return []
        case .idle, .completed:
            throw .unexpected(chunk.kind)
        case .receiving(let key):
            guard var partial = partials[key] else { throw .unexpected(chunk.kind) }
            // Judged on the declared size, before anything is decompressed: a chunk never makes
            // the file longer than offered (or than this receiver takes).
            let end = partial.received + UInt64(chunk.count)
            if let size = partial.size, end > size {
                fail(key, .senderBrokeProtocol(.moreBytesThanOffered), from: sender, events: &events)
                throw .moreBytesThanOffered
            }
            if end > maxFileSize {
                // A stream (no size offered) that outgrew what this receiver takes.
                fail(key, .rejected(.tooLarge), from: sender, events: &events)
                phase = .ignoring(key.id)
                return [.reject(id: key.id, reason: .tooLarge)]
            }
            let bytes: [UInt8]
            do {
                bytes = try chunks.decode(chunk, compressing: compressing)
            } catch {
                fail(key, .senderBrokeProtocol(.decompressionFailed(error)), from: sender, events: &events)
                throw .decompressionFailed(error)
            }
            do {
                try partial.file.write(bytes, at: partial.received)
            } catch {
                fail(key, .couldNotStore(StorageError(adapting: error)), from: sender, events: &events)
                phase = .ignoring(key.id)
                return [.reject(id: key.id, reason: .couldNotStore)]
            }
            partial.hasher.update(bytes)
            partial.received = end
            partial.lastActivity = now
            var replies: [TransferMessage] = []
            if end - partial.lastAck >= TransferConstants.ackInterval {
                partial.lastAck = end
                replies.append(.ack(id: key.id, received: end))
                events.append(.progress(name: partial.name, received: end, size: partial.size))
            }
            partials[key] = partial
            return replies
        }
    }

    /// The end of file `id`: commits it if every byte arrived and the hash matches.
    mutating func done(_ id: TransferID, hash: [UInt8], from sender: AuthenticatedSender,
                       events: inout [Event]) throws(TransferError) -> [TransferMessage] {
        switch phase {
        case .ignoring(let ignored) where ignored == id:
            phase = .idle
            return []
        case .completed(let key) where key.id == id:
            phase = .idle
            guard let done = completed[key] else { throw .unexpected(.done) }
            return [.confirm(id: id, status: .saved, storedName: done.storedName)]
        case .receiving(let key) where key.id == id:
            guard let partial = partials[key] else { throw .unexpected(.done) }
            phase = .idle
            return [commit(key, partial, hash: hash, from: sender, events: &events)]
        default:
            throw .unexpected(.done)
        }
    }

    private mutating func commit(_ key: Key, _ partial: PartialTransfers.Partial, hash: [UInt8],
                                 from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        var partial = partial
        if let size = partial.size, partial.received != size {
            fail(key, .integrity, from: sender, events: &events)
            return .confirm(id: key.id, status: .hashMismatch, storedName: "")
        }
        guard partial.hasher.finalize() == hash else {
            fail(key, .integrity, from: sender, events: &events)
            return .confirm(id: key.id, status: .hashMismatch, storedName: "")
        }
        let storedName: String
        do {
            storedName = try partial.file.commit()
        } catch {
            fail(key, .couldNotStore(StorageError(adapting: error)), from: sender, events: &events)
            return .confirm(id: key.id, status: .couldNotStore, storedName: "")
        }
        _ = partials.remove(key)
        completed.remember(.init(storedName: storedName, size: partial.received), for: key)
        events.append(.fileSaved(sender: sender.name, name: partial.name, storedName: storedName, size: partial.received))
        return .confirm(id: key.id, status: .saved, storedName: storedName)
    }

    // MARK: - Links and lifetimes

    /// The link is gone: the file in progress waits for a resume from now on, unless it holds no
    /// byte yet (resuming it is the same as starting afresh).
    mutating func connectionLost(now: Instant) {
        if case .receiving(let key) = phase, let partial = partials[key] {
            if partial.received == 0 {
                partials.discard(key)
            } else {
                partials[key]?.lastActivity = now
            }
        }
        phase = .idle
    }

    /// The file in progress is not kept for a resume: removed and reported with `failure`.
    mutating func abandonCurrent(because failure: FileFailure, from sender: AuthenticatedSender, events: inout [Event]) {
        if case .receiving(let key) = phase { fail(key, failure, from: sender, events: &events) }
        phase = .idle
    }

    /// Discards partial files whose senders have not come back in time (never the one in progress).
    mutating func expire(now: Instant) {
        if case .receiving(let active) = phase {
            partials.expire(now: now, keeping: active)
        } else {
            partials.expire(now: now, keeping: nil)
        }
    }

    mutating func discardAll() {
        partials.discardAll()
        phase = .idle
    }

    private mutating func fail(_ key: Key, _ failure: FileFailure, from sender: AuthenticatedSender, events: inout [Event]) {
        guard let partial = partials.remove(key) else { return }
        partial.file.discard()
        events.append(.fileFailed(sender: sender.name, name: partial.name, failure))
    }
}
