import Pipeline
import Synchronization
import Transfer

/// Files and folders in memory (`MemoryFileStore`) that several threads use at once, as a
/// receiver server's pump and its connections' storage workers do (`StorageWork`): every call
/// into the memory store holds one lock, and `beforeSync` runs, outside it, on the calling thread,
/// wherever the real store syncs. A benchmark makes syncs slow with it (`blesend-bench slowdisk`);
/// a test holds one commit back.
public final class SharedMemoryStore: FileStore, TreeStore, @unchecked Sendable {
    /// Where the real store would sync.
    public enum Sync: Equatable, Sendable {
        /// A file's commit, by its name (or its path in its folder).
        case fileCommit(String)
        /// A checkpoint of a file kept for a resume.
        case checkpoint(String)
        case folderMade
        case folderCommit
    }

    private let memory = MemoryFileStore()
    private let lock = Mutex(())
    private let beforeSync: @Sendable (Sync) -> Void

    public init(beforeSync: @escaping @Sendable (Sync) -> Void = { _ in }) {
        self.beforeSync = beforeSync
    }

    public var committed: [String: [UInt8]] { locked { memory.committed } }

    func locked<R>(_ body: () throws -> R) rethrows -> R {
        try lock.withLock { _ in try body() }
    }

    func sync(_ point: Sync) { beforeSync(point) }

    public func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        SharedMemoryFile(try locked { try memory.begin(name: name, size: size, sender: sender) }, name: name, store: self)
    }

    public func beginTree(named topName: String, origin: TreeOrigin) throws -> any IncomingTree {
        SharedMemoryTree(try locked { try memory.beginTree(named: topName, origin: origin) }, store: self)
    }
}

private final class SharedMemoryFile: IncomingFile {
    let file: any IncomingFile
    let name: String
    let store: SharedMemoryStore

    init(_ file: any IncomingFile, name: String, store: SharedMemoryStore) {
        self.file = file
        self.name = name
        self.store = store
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws { try store.locked { try file.write(bytes, at: offset) } }
    func commit() throws -> String {
        store.sync(.fileCommit(name))
        return try store.locked { try file.commit() }
    }
    func discard() { store.locked { file.discard() } }
    func checkpoint(_ checkpoint: PartialCheckpoint) throws {
        store.sync(.checkpoint(name))
        try store.locked { try file.checkpoint(checkpoint) }
    }
    func closeForResume() { store.locked { file.closeForResume() } }
}

private final class SharedMemoryTree: IncomingTree {
    let tree: any IncomingTree
    let store: SharedMemoryStore

    init(_ tree: any IncomingTree, store: SharedMemoryStore) {
        self.tree = tree
        self.store = store
    }

    func makeFolder(_ components: [String], id: TransferID) throws {
        store.sync(.folderMade)
        try store.locked { try tree.makeFolder(components, id: id) }
    }
    func beginFile(_ components: [String], id: TransferID, size: UInt64?, executable: Bool) throws -> any IncomingFile {
        let file = try store.locked { try tree.beginFile(components, id: id, size: size, executable: executable) }
        return SharedMemoryFile(file, name: components.joined(separator: "/"), store: store)
    }
    func commit() throws -> String {
        store.sync(.folderCommit)
        return try store.locked { try tree.commit() }
    }
    func discard() { store.locked { tree.discard() } }
    func closeForResume() { store.locked { tree.closeForResume() } }
}
