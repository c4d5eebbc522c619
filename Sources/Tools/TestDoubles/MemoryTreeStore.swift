import Transfer
import Pipeline

/// Folders in memory, for `MemoryFileStore` (extension `folders`): built apart, then moved into
/// `committed` as `top/path` entries (and `folders` as `top/path`), a taken top name numbered
/// `top-1` like the disk store. Files begun and not finished count in `openTemporaries`.
extension MemoryFileStore: TreeStore {
    public func beginTree(named topName: String, origin: TreeOrigin) throws -> any IncomingTree {
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

    func makeFolder(_ components: [String], id: TransferID) throws {
        let path = components.joined(separator: "/")
        guard state == .open else { throw StorageError(.io, "folder closed") }
        guard !path.isEmpty else { return }
        guard files[path] == nil, folders.insert(path).inserted else { throw StorageError(.exists, "\(path) exists") }
    }

    func beginFile(_ components: [String], id: TransferID, size: UInt64?, executable: Bool) throws -> any IncomingFile {
        let path = components.joined(separator: "/")
        guard state == .open else { throw StorageError(.io, "folder closed") }
        guard files[path] == nil, !folders.contains(path) else { throw StorageError(.exists, "\(path) exists") }
        files[path] = ([], executable)   // claimed; filled by the file's commit
        store.openFile()
        return MemoryIncomingFile(store: store, name: path) { [weak self, store] file, commit in
            store.closeFile()
            if commit { self?.files[path]?.bytes = file.bytes } else { self?.files[path] = nil }
            return path
        }
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
