import Pipeline
/// One item a sender offered, from its first offer until the receiver settles it (`confirm` or
/// `reject`), over as many connections as that takes.
struct Outgoing {
    /// Where the item stands on the current connection.
    struct LinkState {
        var offered = false
        var accepted = false
        /// Offered with its data following at once (a new file, pipelining): the receiver starts it at 0.
        var eager = false
        var doneSent = false
    }

    let index: Int
    let item: OutgoingItem
    /// The transfer id (a commit's: the tree id).
    let id: TransferID
    var hash: RunningHash
    var nextOffset: UInt64 = 0
    var highestSent: UInt64 = 0
    var acknowledged: UInt64 = 0
    /// Bytes that carried its data on the air (`data` payloads, `zdata` frames), resends included.
    var airBytes: UInt64 = 0
    var link = LinkState()

    init(index: Int, item: OutgoingItem, id: TransferID, hash: RunningHash) {
        self.index = index
        self.item = item
        self.id = id
        self.hash = hash
    }

    /// A file (single, or of a folder) of known size offered under the transfer id of an earlier run (`FileSource.transferID`):
    /// the receiver may hold bytes that run sent, so it may resume anywhere up to its size (the
    /// bytes before are read and hashed here first), and its offer waits for the `accept`.
    var resumesEarlierRun: Bool {
        guard let source = item.source else { return false }
        return source.transferID != nil && source.sentBefore && source.size != nil
    }

    /// A folder or a commit: settled by `confirm` or `reject` alone, nothing follows its offer.
    var carriesNoData: Bool { item.source == nil }
    var source: any FileSource { item.source ?? EmptySource.shared }

    /// Data may go now: the receiver said where to start, or it will start at 0.
    var mayStream: Bool { link.offered && !link.doneSent && (link.accepted || link.eager) }
    /// In flight on this connection and not finished sending (data or `done` still to go, or
    /// waiting for the `accept` that says where to start).
    var outstanding: Bool { link.offered && !link.doneSent }

    /// A folder or a commit is whole once sent: it waits only for its `confirm`.
    mutating func markSentWhole() {
        link.accepted = true
        link.doneSent = true
    }

    /// The message that offers this item.
    var offer: TransferMessage {
        switch item {
        case .file(let source):
            .offer(TransferMessage.Offer(id: id, size: source.size, name: source.name))
        case .treeFile(let tree, let path, let executable, let source):
            .entry(TransferMessage.Entry(id: id, tree: tree, size: source.size, executable: executable, path: path))
        case .folder(let tree, let path):
            .folder(id: id, tree: tree, path: path)
        case .commit(let tree, _):
            .commit(tree: tree)
        }
    }
}

/// The whole-file hash of a file being sent, over each byte once: bytes read again after a
/// resume were hashed the first time round.
struct RunningHash {
    private var hasher: any ContentHasher
    /// Every byte before this offset is in the hash.
    private(set) var hashedUpTo: UInt64 = 0
    /// The hash, once the whole file went.
    private(set) var digest: [UInt8]?

    init(_ hasher: any ContentHasher) {
        self.hasher = hasher
    }

    /// Hashes the bytes of `source` from where the hash stands up to `offset`: a file resumed
    /// from an earlier run, whose first bytes that run sent.
    mutating func catchUp(to offset: UInt64, from source: any FileSource) throws(TransferError) {
        while hashedUpTo < offset {
            let count = Int(min(65_536, offset - hashedUpTo))
            let bytes: [UInt8]
            do {
                bytes = try source.read(at: hashedUpTo, count: count)
            } catch {
                throw .sourceFailed(FileSourceError(.unreadable, name: source.name, cause: StorageError(adapting: error)))
            }
            guard !bytes.isEmpty, bytes.count <= count else { throw .sourceFailed(FileSourceError(.shrank, name: source.name)) }
            absorb(bytes, at: hashedUpTo)
        }
    }

    /// Adds the bytes of `bytes` (read at `offset`) not hashed yet.
    mutating func absorb(_ bytes: [UInt8], at offset: UInt64) {
        let end = offset + UInt64(bytes.count)
        guard end > hashedUpTo else { return }
        let fresh = Int(end - max(hashedUpTo, offset))
        hasher.update(fresh == bytes.count ? bytes : Array(bytes.suffix(fresh)))
        hashedUpTo = end
    }

    /// The hash of a file that ends at `end`; nil if the bytes hashed do not end there.
    mutating func finish(at end: UInt64) -> [UInt8]? {
        if digest == nil {
            guard hashedUpTo == end else { return nil }
            digest = hasher.finalize()
        }
        return digest
    }
}
