import Durable
import Pipeline
import Storage

/// The one simulated disk of the crash tests (ALICE-style), for every journal and record of
/// durable state and for partial files: a `PartialFolder` in memory. It keeps apart what a power
/// cut keeps (a file's bytes as at its last sync, the folder's entries as at its last sync) from
/// what it may lose; counts every step that writes (a create, a write, a cut, a sync, a remove, a
/// commit's link and unlink, and the four steps of a replace: write the new file, sync it, rename
/// it, sync the folder); can stop for good after any of them (`crashAfter`) or fail one step once,
/// a write half done (`failStep`). `afterPowerCut` is the disk a restart finds, in one of the ways
/// a power cut may leave it (`Loss`). Committed files are kept apart, by final name.
public final class SimulatedDisk: PartialFolder {
    /// How much of what was not synced a power cut leaves.
    public enum Loss: CaseIterable, Sendable {
        /// Everything not synced is gone: data and folder entries as at their last sync.
        case allUnsynced
        /// Everything written is there (the system had flushed it by itself).
        case nothing
        /// Unsynced bytes half there (a torn write; where they overwrote synced ones, garbage),
        /// entries not synced undone.
        case tornAppends
        /// Unsynced bytes gone, entries not synced there.
        case renamesKept
    }

    /// One file: its bytes as they are now, and as its last sync left them.
    private final class File {
        var current: [UInt8]
        var durable: [UInt8]

        init(current: [UInt8], durable: [UInt8]) {
            self.current = current
            self.durable = durable
        }
    }

    /// Names to files, as they are now and as the folder's last sync left them.
    private var current: [String: File] = [:]
    private var durable: [String: File] = [:]
    /// Final names given by `commit` (a subset of `current` / `durable`).
    private var finalNames: Set<String> = []
    /// Steps that wrote so far.
    public private(set) var steps = 0
    /// Stop for good after this many steps: the next one, and every later one, fails.
    public var crashAfter: Int?
    /// Fail this step (counted from 1) once, as EIO; a write fails half done.
    public var failStep: Int?
    public private(set) var crashed = false
    public var clock: UInt64 = 1_000_000
    /// The clock when each name was last written (`modificationTime`); a test may set one.
    public var modified: [String: UInt64] = [:]

    public init() {}

    /// The stored files and their bytes: what a user would take for received files.
    public var stored: [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: current.filter { finalNames.contains($0.key) }.map { ($0.key, $0.value.current) })
    }

    /// The bytes of `name` as they are now; nil when there is no such file.
    public func contents(_ name: String) -> [UInt8]? { current[name]?.current }

    /// Counts a step; throws when it is the one to fail, or once the disk has crashed.
    private func step(_ name: String) throws(StorageError) {
        if crashed { throw StorageError(.io, "crashed") }
        steps += 1
        if let crashAfter, steps > crashAfter {
            crashed = true
            throw StorageError(.io, "crashed")
        }
        if steps == failStep { throw StorageError(.io, "cannot write \(name): input/output error") }
    }

    private func file(_ name: String) throws(StorageError) -> File {
        guard let file = current[name] else { throw StorageError(.io, "no file \(name)") }
        return file
    }

    public func exists(_ name: String) -> Bool { current[name] != nil }

    public func create(_ name: String) throws(StorageError) {
        guard current[name] == nil else { throw StorageError(.exists, "\(name) exists") }
        try step(name)
        current[name] = File(current: [], durable: [])
        modified[name] = clock
    }

    public func write(_ name: String, _ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        let file = try file(name)
        do {
            try step(name)
        } catch {
            if !crashed { Self.put(bytes.prefix(bytes.count / 2), into: file, at: Int(offset)) }
            throw error
        }
        Self.put(bytes[...], into: file, at: Int(offset))
        modified[name] = clock
    }

    private static func put(_ bytes: ArraySlice<UInt8>, into file: File, at start: Int) {
        if file.current.count < start { file.current += [UInt8](repeating: 0, count: start - file.current.count) }
        let overlap = min(bytes.count, file.current.count - start)
        file.current.replaceSubrange(start..<(start + overlap), with: bytes.prefix(overlap))
        file.current += bytes.dropFirst(overlap)
    }

    public func read(_ name: String, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        let bytes = try file(name).current
        guard offset < UInt64(bytes.count) else { return [] }
        return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
    }

    public func length(_ name: String) throws(StorageError) -> UInt64 { UInt64(try file(name).current.count) }

    public func truncate(_ name: String, to length: UInt64) throws(StorageError) {
        let file = try file(name)
        try step(name)
        file.current = Array(file.current.prefix(Int(length)))
        modified[name] = clock
    }

    public func sync(_ name: String) throws(StorageError) {
        let file = try file(name)
        try step(name)
        file.durable = file.current
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(StorageError) {
        let temporary = ".\(name).new"
        try step(temporary)
        let file = File(current: contents, durable: [])
        current[temporary] = file
        try step(temporary)
        file.durable = contents
        try step(name)
        current[name] = file
        current[temporary] = nil
        modified[name] = clock
        try syncFolder()
    }

    public func remove(_ name: String) {
        guard (try? step(name)) != nil else { return }
        current[name] = nil
    }

    public func syncFolder() throws(StorageError) {
        try step("the folder")
        durable = current
    }

    public func commit(_ name: String, as finalName: String) throws(StorageError) -> String {
        let file = try file(name)
        var stored = finalName
        var number = 0
        while current[stored] != nil {
            number += 1
            stored = "\(finalName)-\(number)"
        }
        try step(stored)
        current[stored] = file
        finalNames.insert(stored)
        try step(name)
        current[name] = nil
        return stored
    }

    public func closeFile(_ name: String) {}

    public func ownNames() -> [String] { current.keys.filter { !finalNames.contains($0) }.sorted() }

    public func secondsSinceEpoch() -> UInt64 { clock }

    public func modificationTime(_ name: String) -> UInt64? { current[name] == nil ? nil : modified[name, default: clock] }

    /// The disk a restart finds after a power cut now.
    public func afterPowerCut(_ loss: Loss) -> SimulatedDisk {
        let restarted = SimulatedDisk()
        restarted.clock = clock
        restarted.modified = modified
        let entries = (loss == .nothing || loss == .renamesKept) ? current : durable
        for (name, file) in entries {
            let contents: [UInt8]
            switch loss {
            case .nothing:
                contents = file.current
            case .allUnsynced, .renamesKept:
                contents = file.durable
            case .tornAppends:
                let kept = file.durable.count + max(0, file.current.count - file.durable.count) / 2
                contents = Array(file.current.prefix(kept)).enumerated().map { index, byte in
                    index < file.durable.count && file.durable[index] != byte ? 0xEE : byte
                }
            }
            let copy = File(current: contents, durable: contents)
            restarted.current[name] = copy
            restarted.durable[name] = copy
            if finalNames.contains(name) { restarted.finalNames.insert(name) }
        }
        return restarted
    }
}
