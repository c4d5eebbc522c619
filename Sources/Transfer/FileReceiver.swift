import Pipeline

/// One connection's files, one at a time from its offer (or `entry`) to its commit: writes the
/// data through the `FileStore` (or the folder it belongs to), checks the whole-file hash, and
/// commits only then. Files whose links dropped wait in the ledger's `PartialTransfers` for their
/// sender to resume; completed ones are remembered there, so a sender that missed its `confirm`
/// gets it again, on whichever connection it comes back.
///
/// Its own are the phase and the chunk history; the tables are the `ReceiverLedger`'s, shared with
/// the receiver's other connections. It touches only the partial it holds (`holder`).
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

    let ledger: ReceiverLedger
    /// This connection, as the ledger knows it.
    let holder: LedgerHolder
    private var chunks: ChunkDecoder
    private(set) var phase = Phase.idle
    /// Commits and checkpoints go to the driver as `StorageWork` instead of running here, where
    /// `storage.defers` (see `TransferReceiver.defersStorage`).
    var storage = StorageHandOff()
    /// The link is gone (`connectionLost`): a file kept held while its checkpoint was out is let
    /// go once the outcome is in.
    private var lost = false

    init(ledger: ReceiverLedger, holder: LedgerHolder? = nil, chunks: ChunkDecoder) {
        self.ledger = ledger
        self.holder = holder ?? ledger.newHolder()
        self.chunks = chunks
    }

    var partialCount: Int { ledger.partials.count }

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
    ///
    /// A resume takes the partial over even from another live connection of the same sender (one
    /// whose link dropped without the receiver noticing yet: the admission policy closes the older
    /// when the newer authenticates, and the newer is where the sender goes on). The older one
    /// ignores the rest of its data for that file and gets no `confirm`: one writer at a time.
    /// `completedCounts`: false for a file of a sent folder that was done in a folder that is gone
    /// (`FolderAssembler.isDone`): it is received again.
    mutating func recall(_ key: Key, size: UInt64?, now: Instant, completedCounts: Bool = true, from sender: AuthenticatedSender,
                         events: inout [Event]) -> TransferMessage? {
        // The sender's history starts afresh at every accept, so does ours.
        chunks.reset()
        if case .commit(let size) = ledger.itemsOut[key] {
            // Its commit is out on another connection's worker (its link dropped as the file
            // ended, and its sender came back that fast): answered as a completed file; its
            // `done` waits for that commit's outcome (`TransferReceiver` holds it).
            phase = .completed(key)
            return .accept(id: key.id, offset: size)
        }
        if completedCounts, let done = ledger.completedFiles[key] {
            phase = .completed(key)
            return .accept(id: key.id, offset: done.size)
        }
        if let partial = ledger.partials[key], partial.size == size {
            // A resume: the file keeps the name it was first offered under.
            ledger.partials[key]?.lastActivity = .at(now)
            ledger.partials[key]?.holder = holder
            phase = .receiving(key)
            events.append(.fileStarted(sender: sender.name, name: partial.name, size: partial.size, resumedAt: partial.received))
            return .accept(id: key.id, offset: partial.received)
        }
        ledger.partials.discard(key)
        return nil
    }

    /// The second half: a new file of `size` bytes (nil: a stream) at `destination`.
    mutating func start(_ key: Key, size: UInt64?, at destination: Destination, now: Instant,
                        from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        let name = destination.name
        if let size, size > ledger.maxFileSize {
            return refuse(key.id, name: name, .tooLarge, from: sender, events: &events)
        }
        let file: any IncomingFile
        do {
            file = try ledger.withRoomOnDisk({ () throws -> any IncomingFile in
                switch destination {
                case .store(let name): try ledger.store.begin(name: name, size: size, sender: sender.name)
                case .tree(_, let tree, let below, let executable): try tree.beginFile(below, id: key.id, size: size, executable: executable)
                }
            }, gaveWay: { events.append(.keptRemovedForRoom(name: $0)) })
        } catch {
            let error = StorageError(adapting: error)
            if error.code == .exists { return refuse(key.id, name: name, .exists, from: sender, events: &events) }
            phase = .ignoring(key.id)
            events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
            return .reject(id: key.id, reason: error.code == .tooLarge || error.code == .noSpace ? .tooLarge : .couldNotStore)
        }
        ledger.partials.insert(.init(name: name, size: size, file: file, hasher: ledger.makeHasher(), lastActivity: .at(now), holder: holder),
                               for: key)
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
            // Taken over by a newer connection of this sender, or discarded by a shutdown: the
            // rest of this file's data is ignored here.
            guard var partial = ledger.partials[key], partial.holder == holder else {
                phase = .ignoring(key.id)
                return []
            }
            // Judged on the declared size, before anything is decompressed: a chunk never makes
            // the file longer than offered (or than this receiver takes).
            let end = partial.received + UInt64(chunk.count)
            if let size = partial.size, end > size {
                fail(key, .senderBrokeProtocol(.moreBytesThanOffered), from: sender, events: &events)
                throw .moreBytesThanOffered
            }
            if end > ledger.maxFileSize {
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
                try ledger.withRoomOnDisk({ try partial.file.write(bytes, at: partial.received) },
                                          gaveWay: { events.append(.keptRemovedForRoom(name: $0)) })
            } catch {
                fail(key, .couldNotStore(StorageError(adapting: error)), from: sender, events: &events)
                phase = .ignoring(key.id)
                return [.reject(id: key.id, reason: .couldNotStore)]
            }
            partial.hasher.update(bytes)
            partial.received = end
            partial.lastActivity = .at(now)
            var replies: [TransferMessage] = []
            if end - partial.lastAck >= TransferConstants.ackInterval {
                partial.lastAck = end
                replies.append(.ack(id: key.id, received: end))
                events.append(.progress(name: partial.name, received: end, size: partial.size))
            }
            ledger.partials[key] = partial
            if end - partial.checkpointed >= TransferConstants.checkpointInterval {
                if storage.defers {
                    handOutCheckpoint(of: key, partial.file)
                    return replies
                }
                do {
                    try ledger.partials.checkpoint(key)
                } catch {
                    fail(key, .couldNotStore(StorageError(adapting: error)), from: sender, events: &events)
                    phase = .ignoring(key.id)
                    return replies + [.reject(id: key.id, reason: .couldNotStore)]
                }
            }
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
            // Not there: its commit on another connection failed (that connection reported it).
            guard let done = ledger.completedFiles[key] else { return [.confirm(id: id, status: .couldNotStore, storedName: "")] }
            return [.confirm(id: id, status: .saved, storedName: done.storedName)]
        case .receiving(let key) where key.id == id:
            phase = .idle
            // Taken over by a newer connection (see `recall`): that one confirms it.
            guard let partial = ledger.partials[key], partial.holder == holder else { return [] }
            return commit(key, partial, hash: hash, from: sender, events: &events).map { [$0] } ?? []
        default:
            throw .unexpected(.done)
        }
    }

    /// The answer to a complete file's `done`: its `confirm`, or nil when its commit went out as
    /// `StorageWork` (the `confirm` comes with the outcome, `settle`).
    private mutating func commit(_ key: Key, _ partial: PartialTransfers.Partial, hash: [UInt8],
                                 from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage? {
        var partial = partial
        if let size = partial.size, partial.received != size {
            fail(key, .integrity, from: sender, events: &events)
            return .confirm(id: key.id, status: .hashMismatch, storedName: "")
        }
        guard partial.hasher.finalize() == hash else {
            fail(key, .integrity, from: sender, events: &events)
            return .confirm(id: key.id, status: .hashMismatch, storedName: "")
        }
        if storage.defers {
            // Out of the ledger while the worker has it: no expiry, eviction, checkpoint or
            // shutdown on the pump touches the file any more.
            _ = ledger.partials.remove(key)
            let memory = ledger.completedMemory
            storage.handOut(.commit(name: partial.name, size: partial.received, hash: hash), of: key, in: ledger) {
                .commit(partial.file, size: partial.received, of: key, rememberedIn: memory, ticket: $0)
            }
            return nil
        }
        let storedName: String
        do {
            storedName = try partial.file.commit()
        } catch {
            fail(key, .couldNotStore(StorageError(adapting: error)), from: sender, events: &events)
            return .confirm(id: key.id, status: .couldNotStore, storedName: "")
        }
        _ = ledger.partials.remove(key)
        // Best effort: if it is not kept, a restart before the sender hears `confirm` costs a copy.
        try? ledger.completedMemory?.remember(.init(senderKey: key.senderKey, id: key.id, storedName: storedName, size: partial.received))
        return saved(key, name: partial.name, as: storedName, size: partial.received, hash: hash, from: sender, events: &events)
    }

    /// The file is stored as `storedName` (and written down in `completedMemory`): remembered as
    /// completed, reported and confirmed.
    private func saved(_ key: Key, name: String, as storedName: String, size: UInt64, hash: [UInt8],
                       from sender: AuthenticatedSender, events: inout [Event]) -> TransferMessage {
        ledger.completedFiles.remember(.init(storedName: storedName, size: size), for: key)
        events.append(.fileSaved(sender: sender.name, name: name, storedName: storedName, size: size, hash: hash))
        return .confirm(id: key.id, status: .saved, storedName: storedName)
    }

    // MARK: - Deferred storage

    /// The file whose data or `done` comes next, if any.
    var current: Key? {
        switch phase {
        case .receiving(let key), .completed(let key): key
        case .idle, .ignoring: nil
        }
    }

    /// Hands out the checkpoint `key`'s file is due, if it received anything since the last;
    /// whether it did.
    @discardableResult
    private mutating func handOutCheckpoint(of key: Key, _ file: any IncomingFile) -> Bool {
        guard let checkpoint = ledger.partials.nextCheckpoint(key) else { return false }
        storage.handOut(.checkpoint(durable: checkpoint.durable), of: key, in: ledger) { .checkpoint(file, checkpoint, ticket: $0) }
        return true
    }

    /// Whether storage work of `key` is out on some connection's worker.
    func isOut(_ key: Key) -> Bool { ledger.itemsOut[key] != nil }

    /// The outcome of a file's work (`settled`, no longer out): the answers it brings (a commit's
    /// `confirm`, a failed checkpoint's `reject`). The ledger learns of it even after the
    /// connection ended.
    mutating func settle(_ settled: StorageHandOff.Out, _ outcome: StorageOutcome, now: Instant, from sender: AuthenticatedSender,
                         events: inout [Event]) -> [TransferMessage] {
        let key = settled.key
        switch (settled.job, outcome.result) {
        case (.commit(let name, let size, let hash), .success(.committed(let storedName))):
            return [saved(key, name: name, as: storedName, size: size, hash: hash, from: sender, events: &events)]
        case (.commit(let name, _, _), let result):
            // It failed (the worker removed the file already), or was answered as no commit is.
            let error = if case .failure(let error) = result { error } else { StorageError(.io, "a commit answered as a checkpoint") }
            events.append(.fileFailed(sender: sender.name, name: name, .couldNotStore(error)))
            return [.confirm(id: key.id, status: .couldNotStore, storedName: "")]
        case (.checkpoint(let durable), let result):
            if let failure = storage.abandoned.take() {
                fail(key, failure, from: sender, events: &events)
                return []
            }
            if case .failure(let error) = result {
                guard ledger.partials[key]?.holder == holder else { return [] }
                fail(key, .couldNotStore(error), from: sender, events: &events)
                if case .receiving(key) = phase { phase = .ignoring(key.id) }
                return [.reject(id: key.id, reason: .couldNotStore)]
            }
            ledger.partials.checkpointed(key, at: durable)
            if lost { ledger.partials.release(key, heldBy: holder, now: now) }
            return []
        case (.makeFolder, _), (.commitFolder, _):
            return []   // the folders' (`FolderAssembler.settle`)
        }
    }

    // MARK: - Links and lifetimes

    /// The link is gone: the file in progress waits for a resume from now on, unless it holds no
    /// byte yet (resuming it is the same as starting afresh). Other connections' files stay as
    /// they are.
    mutating func connectionLost(now: Instant) {
        lost = true
        // A file whose checkpoint is out stays held until the outcome is in (`settle`); so does
        // the file in progress, whose last checkpoint goes out now where work is deferred.
        var kept: Key?
        if let out = storage.out {
            if case .checkpoint = out.job { kept = out.key }
        } else if storage.defers, case .receiving(let key) = phase, let partial = ledger.partials[key], partial.holder == holder {
            if handOutCheckpoint(of: key, partial.file) { kept = key }
        }
        ledger.partials.release(heldBy: holder, now: now, except: kept)
        phase = .idle
    }

    /// The file in progress is not kept for a resume: removed and reported with `failure`.
    mutating func abandonCurrent(because failure: FileFailure, from sender: AuthenticatedSender, events: inout [Event]) {
        if case .receiving(let key) = phase {
            // A file being checkpointed on the worker is removed once the outcome is in.
            if storage.out?.key == key { storage.abandoned = failure } else { fail(key, failure, from: sender, events: &events) }
        }
        phase = .idle
    }

    /// Discards partial files whose senders have not come back in time (never one that a live
    /// connection, this or another, is receiving).
    mutating func expire(now: Instant) {
        ledger.partials.expire(now: now)
    }

    /// Discards every partial file, other connections' too (shutdown).
    mutating func discardAll() {
        ledger.partials.discardAll()
        phase = .idle
    }

    /// Removes the partial of `key` and reports it with `failure`, if this connection holds it.
    private mutating func fail(_ key: Key, _ failure: FileFailure, from sender: AuthenticatedSender, events: inout [Event]) {
        guard ledger.partials[key]?.holder == holder, let partial = ledger.partials.remove(key) else { return }
        partial.file.discard()
        events.append(.fileFailed(sender: sender.name, name: partial.name, failure))
    }
}
