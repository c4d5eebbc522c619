import Transfer
import Pipeline

/// Stores incoming files in memory. `committed` holds finished files by stored name;
/// `openTemporaries` counts files begun but neither committed nor discarded.
public final class MemoryFileStore: FileStore {
    public private(set) var committed: [String: [UInt8]] = [:]
    public private(set) var openTemporaries = 0
    /// When set, only this many bytes may be held in total (to test "disk full"): written, less
    /// those of files discarded.
    public var capacity: Int?
    /// When false, bytes are counted and checked against `PatternFileSource` instead of kept
    /// (for benchmarks that move gigabytes).
    public var keepsBytes: Bool
    public private(set) var patternMismatches = 0
    private var used = 0
    /// Folders stored whole (`MemoryTreeStore`), as `top/path`; a stored top folder itself as `top`.
    public private(set) var folders: Set<String> = []
    /// Folders begun but neither committed nor discarded.
    public internal(set) var openTrees = 0

    public init(keepsBytes: Bool = true) { self.keepsBytes = keepsBytes }

    public func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        if let capacity, let size, size > UInt64(capacity - used) {
            throw StorageError(.noSpace, "not enough space for \(name)")
        }
        openTemporaries += 1
        return MemoryIncomingFile(store: self, name: name) { [unowned self] file, commit in try self.finish(file, commit: commit) }
    }

    func reserve(_ count: Int) throws {
        if let capacity, used + count > capacity { throw StorageError(.noSpace, "disk full") }
        used += count
    }

    private func finish(_ file: MemoryIncomingFile, commit: Bool) throws -> String {
        openTemporaries -= 1
        guard commit else {
            used -= Int(file.length)
            return ""
        }
        var stored = file.name
        var n = 1
        while committed[stored] != nil {
            stored = "\(file.name).\(n)"
            n += 1
        }
        committed[stored] = file.bytes
        return stored
    }

    /// Counts a mismatch if `data` at `offset` is not `PatternFileSource`'s bytes.
    func checkPattern(_ data: [UInt8], at offset: UInt64) {
        for (i, byte) in data.enumerated() where byte != PatternFileSource.byte(at: offset + UInt64(i)) {
            patternMismatches += 1
            break
        }
    }

    func openFile() { openTemporaries += 1 }
    func closeFile() { openTemporaries -= 1 }
    func closeTree() { openTrees -= 1 }

    /// Moves a finished folder into place under `topName`, or `topName-N` if taken; returns the name.
    func placeTree(_ topName: String, folders: Set<String>, files: [String: [UInt8]]) -> String {
        var stored = topName
        var n = 1
        while self.folders.contains(stored) || committed[stored] != nil {
            stored = "\(topName)-\(n)"
            n += 1
        }
        self.folders.insert(stored)
        for folder in folders { self.folders.insert(stored + "/" + folder) }
        for (path, bytes) in files { committed[stored + "/" + path] = bytes }
        openTrees -= 1
        return stored
    }
}

/// One file being written in memory; `finish` says where it goes when committed (true) or
/// discarded (false), and returns the name it got.
final class MemoryIncomingFile: IncomingFile {
    typealias Finish = (MemoryIncomingFile, _ commit: Bool) throws -> String

    private let store: MemoryFileStore
    let name: String
    var bytes: [UInt8] = []
    private(set) var length: UInt64 = 0
    private var open = true
    private let finish: Finish

    init(store: MemoryFileStore, name: String, finish: @escaping Finish) {
        self.store = store
        self.name = name
        self.finish = finish
    }

    func write(_ data: [UInt8], at offset: UInt64) throws {
        guard open else { throw StorageError(.io, "file closed") }
        guard offset == length else { throw StorageError(.io, "write out of order") }
        try store.reserve(data.count)
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
        return try finish(self, true)
    }

    func discard() {
        guard open else { return }
        open = false
        _ = try? finish(self, false)
    }
}
