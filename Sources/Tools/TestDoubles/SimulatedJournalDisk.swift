#if canImport(Glibc)
import Glibc
#endif
import Handshake
import State

/// A `JournalDisk` in memory for crash tests (ALICE-style): it keeps apart what a power cut
/// keeps (data synced, folder entries synced) from what it may lose, counts every step that
/// writes (an append, a sync, a cut, and the four steps of a replace: write the new file, sync
/// it, rename it, sync the folder), and can stop for good after any of them (`crashAfter`) or fail
/// one step once, leaving half of an append behind (`failStep`). `afterPowerCut` is the disk a
/// restart finds, in one of the ways a power cut may leave it (`Loss`).
public final class SimulatedJournalDisk: JournalDisk {
    /// How much of what was not synced a power cut leaves.
    public enum Loss: CaseIterable, Sendable {
        /// Everything not synced is gone: data and folder entries as at their last sync.
        case allUnsynced
        /// Everything written is there (the system had flushed it by itself).
        case nothing
        /// Unsynced appends half there (a torn write), renames not synced undone.
        case tornAppends
        /// Unsynced appends gone, renames not synced there.
        case renamesKept
    }

    private typealias File = SimulatedFile

    private var current: [String: File] = [:]
    private var durable: [String: File] = [:]
    /// Steps that wrote so far.
    public private(set) var steps = 0
    /// Stop for good after this many steps: the next one, and every later one, fails.
    public var crashAfter: Int?
    /// Fail this step (counted from 1) once, as EIO; an append fails half-written.
    public var failStep: Int?
    public private(set) var crashed = false

    public init() {}

    public func read(_ name: String) throws(ReplayMemoryFailure) -> [UInt8]? {
        current[name]?.current
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(ReplayMemoryFailure) {
        let temporary = ".\(name).new"
        try step(.write, temporary)
        let file = File(current: contents, durable: [])
        current[temporary] = file
        try step(.sync, temporary)
        file.durable = contents
        try step(.rename, name)
        current[name] = file
        current[temporary] = nil
        try step(.sync, "folder")
        durable = current
    }

    public func append(_ name: String, _ bytes: [UInt8]) throws(ReplayMemoryFailure) {
        guard let file = current[name] else { throw ReplayMemoryFailure(.open, errno: ENOENT, path: name) }
        do {
            try step(.write, name)
        } catch {
            if !crashed { file.current += bytes.prefix(bytes.count / 2) }
            throw error
        }
        file.current += bytes
    }

    public func sync(_ name: String) throws(ReplayMemoryFailure) {
        guard let file = current[name] else { throw ReplayMemoryFailure(.open, errno: ENOENT, path: name) }
        try step(.sync, name)
        file.durable = file.current
    }

    public func truncate(_ name: String, to length: Int) throws(ReplayMemoryFailure) {
        guard let file = current[name] else { throw ReplayMemoryFailure(.open, errno: ENOENT, path: name) }
        try step(.truncate, name)
        file.current = Array(file.current.prefix(length))
    }

    private func step(_ kind: ReplayMemoryFailure.Step, _ path: String) throws(ReplayMemoryFailure) {
        if crashed { throw ReplayMemoryFailure(kind, errno: EIO, path: path) }
        steps += 1
        if let crashAfter, steps > crashAfter {
            crashed = true
            throw ReplayMemoryFailure(kind, errno: EIO, path: path)
        }
        if steps == failStep { throw ReplayMemoryFailure(kind, errno: EIO, path: path) }
    }

    /// The disk a restart finds after a power cut now.
    public func afterPowerCut(_ loss: Loss) -> SimulatedJournalDisk {
        let restarted = SimulatedJournalDisk()
        let entries = (loss == .nothing || loss == .renamesKept) ? current : durable
        for (name, file) in entries {
            let contents: [UInt8]
            switch loss {
            case .nothing:
                contents = file.current
            case .allUnsynced, .renamesKept:
                contents = file.durable
            case .tornAppends:
                let grew = file.current.count > file.durable.count && Array(file.current.prefix(file.durable.count)) == file.durable
                contents = grew ? file.durable + file.current[file.durable.count...].prefix((file.current.count - file.durable.count) / 2) : file.durable
            }
            let copy = File(current: contents, durable: contents)
            restarted.current[name] = copy
            restarted.durable[name] = copy
        }
        return restarted
    }
}
