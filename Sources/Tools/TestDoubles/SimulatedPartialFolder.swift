import Storage
import Transfer

/// A `PartialFolder` in memory for crash tests (ALICE-style): it keeps apart what a power cut
/// keeps (file data as at its last sync, folder entries as at the folder's last sync) from what it
/// may lose, counts every step that writes (a write, a cut, a sync, a create, a remove, a commit's
/// link, and the four steps of a replace), and can stop for good after any of them
/// (`crashAfter`). `afterPowerCut` is the folder a restart finds, in one of the ways a power cut
/// may leave it (`SimulatedJournalDisk.Loss`). Committed files are kept apart, by final name.
public final class SimulatedPartialFolder: PartialFolder {
    public typealias Loss = SimulatedJournalDisk.Loss

    private typealias File = SimulatedFile

    /// Names to files, as they are now and as the folder's last sync left them.
    private var current: [String: File] = [:]
    private var durable: [String: File] = [:]
    /// Final names given by `commit` (a subset of `current` / `durable`).
    private var finalNames: Set<String> = []
    public private(set) var steps = 0
    public var crashAfter: Int?
    public private(set) var crashed = false
    public var clock: UInt64 = 1_000_000

    public init() {}

    /// The stored files and their bytes: what a user would take for received files.
    public var stored: [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: current.filter { finalNames.contains($0.key) }.map { ($0.key, $0.value.current) })
    }

    private func step() throws(StorageError) {
        if crashed { throw StorageError(.io, "crashed") }
        steps += 1
        if let crashAfter, steps > crashAfter {
            crashed = true
            throw StorageError(.io, "crashed")
        }
    }

    private func file(_ name: String) throws(StorageError) -> File {
        guard let file = current[name] else { throw StorageError(.io, "no file \(name)") }
        return file
    }

    public func create(_ name: String) throws(StorageError) {
        guard current[name] == nil else { throw StorageError(.exists, "\(name) exists") }
        try step()
        current[name] = File(current: [], durable: [])
    }

    public func write(_ name: String, _ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        let file = try file(name)
        try step()
        let start = Int(offset)
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
        try step()
        file.current = Array(file.current.prefix(Int(length)))
    }

    public func sync(_ name: String) throws(StorageError) {
        let file = try file(name)
        try step()
        file.durable = file.current
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(StorageError) {
        let temporary = name + "-new"
        try step()
        let file = File(current: contents, durable: [])
        current[temporary] = file
        try step()
        file.durable = contents
        try step()
        current[name] = file
        current[temporary] = nil
        try syncFolder()
    }

    public func remove(_ name: String) {
        guard (try? step()) != nil else { return }
        current[name] = nil
    }

    public func syncFolder() throws(StorageError) {
        try step()
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
        try step()
        current[stored] = file
        finalNames.insert(stored)
        try step()
        current[name] = nil
        return stored
    }

    public func closeFile(_ name: String) {}

    public func ownNames() -> [String] { current.keys.filter { !finalNames.contains($0) }.sorted() }

    public func secondsSinceEpoch() -> UInt64 { clock }

    /// The folder a restart finds after a power cut now.
    public func afterPowerCut(_ loss: Loss) -> SimulatedPartialFolder {
        let restarted = SimulatedPartialFolder()
        restarted.clock = clock
        let entries = (loss == .nothing || loss == .renamesKept) ? current : durable
        for (name, file) in entries {
            let contents: [UInt8]
            switch loss {
            case .nothing:
                contents = file.current
            case .allUnsynced, .renamesKept:
                contents = file.durable
            case .tornAppends:
                // Unsynced bytes half there; where they overwrote synced ones, garbage instead.
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
