import Handshake

/// The few file operations a journal makes, in one folder, by file name: what `ReplayJournal`
/// needs from a disk. `PosixJournalDisk` makes them with system calls; the crash tests run them
/// on a simulated disk that can stop after any step and keep only what a power cut would.
public protocol JournalDisk: AnyObject {
    /// The file's bytes; nil when there is no such file.
    func read(_ name: String) throws(ReplayMemoryFailure) -> [UInt8]?
    /// Puts `contents` in place of `name` as one step a crash cannot split: a new file written
    /// and synced, renamed over `name`, then the folder synced.
    func replace(_ name: String, with contents: [UInt8]) throws(ReplayMemoryFailure)
    /// Appends `bytes` to `name` (not yet durable: `sync`).
    func append(_ name: String, _ bytes: [UInt8]) throws(ReplayMemoryFailure)
    /// Makes what was appended to or cut from `name` durable.
    func sync(_ name: String) throws(ReplayMemoryFailure)
    /// Cuts `name` to its first `length` bytes (not yet durable: `sync`).
    func truncate(_ name: String, to length: Int) throws(ReplayMemoryFailure)
}
