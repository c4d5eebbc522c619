import Transfer

/// The file operations a partial file kept across runs needs, by name, in the output folder:
/// what `DurableIncomingFile` and `PartialRecovery` ask of a disk. `DirectoryFileStore` makes them
/// with system calls relative to its folder's descriptor; the crash tests run them on a simulated
/// folder that can stop after any step and keep only what a power cut would.
public protocol PartialFolder: AnyObject {
    /// Creates the empty file `name` (mode 0600); fails when the name is taken.
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
    /// Gives the synced file `name` its final name, `finalName` or a numbered one as
    /// `DirectoryFileStore` places files, and removes `name` (not yet durable: `syncFolder`);
    /// returns the name it got.
    func commit(_ name: String, as finalName: String) throws(StorageError) -> String
    /// Stops writing `name`, keeping it for a later run.
    func closeFile(_ name: String)
    /// The names of this receiver's temporaries and records in the folder (`TemporaryNames`).
    func ownNames() -> [String]
    /// Seconds since 1970, for a record's age.
    func secondsSinceEpoch() -> UInt64
}
