import Pipeline

/// The one disk protocol under durable state: the few file operations a journal or a record needs,
/// by name, in one folder. `PosixDisk` makes them with system calls in the state folder,
/// `DirectoryFileStore` in the output folder (as a `PartialFolder`); the crash tests run them on
/// `SimulatedDisk`, which can stop after any step and keep only what a power cut would.
///
/// A step that writes is not durable until `sync` (a file's bytes and length) or `syncFolder`
/// (names made, renamed or removed); `replace` is durable when it returns.
public protocol DurableDisk: AnyObject {
    /// Whether there is an entry `name`.
    func exists(_ name: String) -> Bool
    /// Creates the empty file `name` (mode 0600); fails (`exists`) when the name is taken.
    func create(_ name: String) throws(StorageError)
    func write(_ name: String, _ bytes: [UInt8], at offset: UInt64) throws(StorageError)
    /// Up to `count` bytes of `name` from `offset`; fewer only at its end.
    func read(_ name: String, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8]
    func length(_ name: String) throws(StorageError) -> UInt64
    /// Cuts `name` to `length` bytes (not yet durable: `sync`).
    func truncate(_ name: String, to length: UInt64) throws(StorageError)
    /// Makes what was written to or cut from `name` durable.
    func sync(_ name: String) throws(StorageError)
    /// Puts `contents` in place of `name` as one step a crash cannot split: a new file written
    /// and synced, renamed over `name`, then the folder synced.
    func replace(_ name: String, with contents: [UInt8]) throws(StorageError)
    /// Removes `name`, if there (not yet durable: `syncFolder`).
    func remove(_ name: String)
    /// Makes the folder's entries (names made, renamed, removed) durable.
    func syncFolder() throws(StorageError)
    /// Lets go of what is held open for `name` (the file stays).
    func closeFile(_ name: String)
    /// Seconds since 1970, for a record's age.
    func secondsSinceEpoch() -> UInt64
    /// When `name` was last written, in seconds since 1970; nil when it cannot be looked at.
    func modificationTime(_ name: String) -> UInt64?
}
