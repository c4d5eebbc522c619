import Pipeline
/// What the transfer layer is handed to read, store and hash files. The core never opens a file
/// itself: the command line hands it real files, tests hand it memory.

/// The bytes of one outgoing file or stream.
public protocol FileSource: AnyObject {
    /// The name offered to the receiver (a base name; the receiver sanitises it again).
    var name: String { get }
    /// The size, or `nil` for a stream read until its end.
    var size: UInt64? { get }
    /// Up to `count` bytes starting at `offset`; fewer only at the end, empty at or past the end.
    /// A stream may refuse offsets before the last `release(before:)` point.
    func read(at offset: UInt64, count: Int) throws -> [UInt8]
    /// The receiver holds every byte before `offset`: a stream may forget them.
    func release(before offset: UInt64)
    /// The transfer id to offer it under (one kept from an earlier run, or one made from what the
    /// file is); nil: a fresh one.
    var transferID: TransferID? { get }
    /// Whether an earlier run may have sent some of it under `transferID`, so that its receiver
    /// may hold a partial to resume: then it is offered and waits for its `accept`.
    var sentBefore: Bool { get }
}

extension FileSource {
    public func release(before offset: UInt64) {}
    public var transferID: TransferID? { nil }
    public var sentBefore: Bool { transferID != nil }
}

/// Where incoming files go.
public protocol FileStore: AnyObject {
    /// Prepares a temporary place for an incoming file called `name` (already sanitised).
    /// Throws `StorageError` when the file cannot be stored (too large for the disk, no permission).
    func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile
    /// The partial files an earlier run left and checkpointed, checked against their checkpoints
    /// (a store that keeps nothing across runs finds none), and how many it removed.
    func recoverPartials(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredPartial>
}

extension FileStore {
    public func recoverPartials(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredPartial> { Recovered() }
}


/// One incoming file in its temporary place. Nothing is visible under the final name until `commit`.
public protocol IncomingFile: AnyObject {
    /// Writes `bytes` at `offset` (always the current end: data arrives in order).
    func write(_ bytes: [UInt8], at offset: UInt64) throws
    /// Moves the file into place without overwriting anything; returns the name it got.
    func commit() throws -> String
    /// Removes the temporary file. Safe to call more than once, and after a failed `commit`.
    func discard()
    /// Makes the first `checkpoint.durable` bytes durable and records `checkpoint` beside them,
    /// so that a restarted receiver resumes from there. A file that does not outlive its process
    /// does nothing.
    func checkpoint(_ checkpoint: PartialCheckpoint) throws
    /// The receiver stops (after a `checkpoint`): a file that outlives its process is closed and
    /// kept for the next run; any other is discarded.
    func closeForResume()
}

extension IncomingFile {
    public func checkpoint(_ checkpoint: PartialCheckpoint) throws {}
    public func closeForResume() { discard() }
}

/// Computes the whole-file hash (BLAKE2b-256, handed in by the session).
public protocol ContentHasher {
    mutating func update(_ bytes: [UInt8])
    mutating func finalize() -> [UInt8]
}

/// Where incoming folders go (extension `folders`, docs/protocol.md §8.4).
public protocol TreeStore: AnyObject {
    /// Starts an incoming folder called `topName` (already reduced by the name policy) in a hidden
    /// place; nothing is visible until `commit`. `origin` names it for a store that keeps
    /// folders across runs (`recoverTrees`).
    func beginTree(named topName: String, origin: TreeOrigin) throws -> any IncomingTree
    /// The folders an earlier run left and kept, checked (a store that keeps nothing across runs
    /// finds none), and how many it removed.
    func recoverTrees(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredTree>
}

extension TreeStore {
    public func recoverTrees(makeHasher: () -> any ContentHasher) -> Recovered<RecoveredTree> { Recovered() }
}

/// One incoming folder in its hidden place. A receiver that defers storage
/// (`TransferReceiver.defersStorage`) makes folders in it and commits its files and itself on a
/// connection's storage worker, while its pump may place another connection's files in it: it
/// takes one caller at a time.
public protocol IncomingTree: AnyObject {
    /// Creates the folder at `components` below the top folder (missing parents too); `id` is the
    /// `folder` item's transfer id.
    func makeFolder(_ components: [String], id: TransferID) throws
    /// Starts the file at `components` below the top folder (`id`: the `entry`'s transfer id); its
    /// `commit` finishes it inside the folder and returns its path there.
    func beginFile(_ components: [String], id: TransferID, size: UInt64?, executable: Bool) throws -> any IncomingFile
    /// Moves the whole folder into place without replacing anything; returns the name it got.
    func commit() throws -> String
    /// Removes the folder and everything in it. Safe to call more than once.
    func discard()
    /// The receiver stops (after its files' `closeForResume`): a folder kept across runs is
    /// closed and left for the next run; any other is discarded.
    func closeForResume()
}

extension IncomingTree {
    public func closeForResume() { discard() }
}
