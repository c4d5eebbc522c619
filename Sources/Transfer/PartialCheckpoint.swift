/// What a receiver records of a partial file at a sync point, so that a restarted receiver can
/// resume it: whose it is, what it is, and how many of its bytes are on disk for good.
///
/// `prefixHash` is the whole-file hash (BLAKE2b-256) of exactly those `durable` bytes: a restarted
/// receiver hashes them again, both to go on hashing the file from there and to check that the
/// bytes it finds are the ones it synced (else it starts that file over).
public struct PartialCheckpoint: Equatable, Sendable {
    public let senderKey: [UInt8]
    public let id: TransferID
    /// The sanitised name it was first offered under (a resume keeps it).
    public let name: String
    /// The offered size; nil for a stream.
    public let size: UInt64?
    public let durable: UInt64
    public let prefixHash: [UInt8]

    public init(senderKey: [UInt8], id: TransferID, name: String, size: UInt64?, durable: UInt64, prefixHash: [UInt8]) {
        self.senderKey = senderKey
        self.id = id
        self.name = name
        self.size = size
        self.durable = durable
        self.prefixHash = prefixHash
    }
}

/// A partial file a store found on disk at start, checked: its first `checkpoint.durable` bytes
/// hash to `checkpoint.prefixHash`, and `hasher` has taken them in. `age`: how long before the
/// start it was last saved (its wait for the sender so far; the receiver keeps it for what is left
/// of `--keep-partials`).
public struct RecoveredPartial {
    public let checkpoint: PartialCheckpoint
    public let file: any IncomingFile
    public let hasher: any ContentHasher
    public let age: Duration

    public init(checkpoint: PartialCheckpoint, file: any IncomingFile, hasher: any ContentHasher, age: Duration = .zero) {
        self.checkpoint = checkpoint
        self.file = file
        self.hasher = hasher
        self.age = age
    }
}

/// A folder a store found on disk at start (`TreeStore.recoverTrees`), checked: what of it was
/// settled before the restart, and its files part-way, each to resume like a partial file.
public struct RecoveredTree {
    public let origin: TreeOrigin
    /// The top folder's name as reduced (the folder's name for people).
    public let name: String
    public let tree: any IncomingTree
    /// Its `folder` items below the top folder that were made: transfer id, and the last
    /// component as stored.
    public let folders: [(id: TransferID, storedName: String)]
    /// Its files that were finished: transfer id, path below the top folder, size.
    public let files: [(id: TransferID, path: String, size: UInt64)]
    /// Its files part-way; each checkpoint's `name` is the file's name for people (`top/path`).
    public let partials: [RecoveredPartial]
    /// How long before the start its journal was last saved.
    public let age: Duration

    public init(origin: TreeOrigin, name: String, tree: any IncomingTree,
                folders: [(id: TransferID, storedName: String)], files: [(id: TransferID, path: String, size: UInt64)],
                partials: [RecoveredPartial], age: Duration = .zero) {
        self.origin = origin
        self.name = name
        self.tree = tree
        self.folders = folders
        self.files = files
        self.partials = partials
        self.age = age
    }
}
