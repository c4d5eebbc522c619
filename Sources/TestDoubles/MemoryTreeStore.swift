import Transfer

/// Folders in memory, for `MemoryFileStore` (extension `folders`): built apart, then moved into
/// `committed` as `top/path` entries (and `folders` as `top/path`), a taken top name numbered
/// `top-1` like the disk store. Files begun and not finished count in `openTemporaries`.
extension MemoryFileStore: TreeStore {
    public func beginTree(named topName: String) throws -> any IncomingTree {
        openTrees += 1
        return MemoryIncomingTree(store: self, topName: topName)
    }
}

final class MemoryIncomingTree: IncomingTree {
    private let store: MemoryFileStore
    let topName: String
    private var folders: Set<String> = []
    private(set) var files: [String: (bytes: [UInt8], executable: Bool)] = [:]
    private var state = State.open

    private enum State { case open, committed, discarded }

    init(store: MemoryFileStore, topName: String) {
        self.store = store
        self.topName = topName
    }

    func makeFolder(_ components: [String]) throws {
        let path = components.joined(separator: "/")
        guard state == .open else { throw StorageError(.io, "folder closed") }
        guard !path.isEmpty else { return }
        guard files[path] == nil, folders.insert(path).inserted else { throw StorageError(.exists, "\(path) exists") }
    }

    func beginFile(_ components: [String], size: UInt64?, executable: Bool) throws -> any IncomingFile {
        let path = components.joined(separator: "/")
        guard state == .open else { throw StorageError(.io, "folder closed") }
        guard files[path] == nil, !folders.contains(path) else { throw StorageError(.exists, "\(path) exists") }
        files[path] = ([], executable)   // claimed; filled by the file's commit
        return try MemoryTreeFile(tree: self, path: path, opening: store)
    }

    fileprivate func finish(_ path: String, bytes: [UInt8]?) {
        if let bytes { files[path]?.bytes = bytes } else { files[path] = nil }
    }

    func commit() throws -> String {
        guard state == .open else { throw StorageError(.io, "folder closed") }
        let stored = store.placeTree(topName, folders: folders, files: files.mapValues(\.bytes))
        state = .committed
        return stored
    }

    func discard() {
        guard state == .open else { return }
        state = .discarded
        store.closeTree()
    }
}

final class MemoryTreeFile: IncomingFile {
    private weak var tree: MemoryIncomingTree?
    private let store: MemoryFileStore
    let path: String
    private var bytes: [UInt8] = []
    private var open = true

    init(tree: MemoryIncomingTree, path: String, opening store: MemoryFileStore) throws {
        self.tree = tree
        self.path = path
        self.store = store
        store.openFile()
    }

    private var length: UInt64 = 0

    func write(_ data: [UInt8], at offset: UInt64) throws {
        guard open, offset == length else { throw StorageError(.io, "write out of order") }
        if store.keepsBytes {
            bytes += data
        } else {
            store.checkPattern(data, at: offset)
        }
        length += UInt64(data.count)
    }

    func commit() throws -> String {
        guard open else { throw StorageError(.io, "file closed") }
        open = false
        store.closeFile()
        tree?.finish(path, bytes: bytes)
        return path
    }

    func discard() {
        guard open else { return }
        open = false
        store.closeFile()
        tree?.finish(path, bytes: nil)
    }
}
