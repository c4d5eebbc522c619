import Durable
import Pipeline

/// The output folder as the durable disk of partial files kept across runs: what
/// `DurableIncomingFile`, `PartialRecovery` and `TreeRecovery` ask of it beyond any `DurableDisk`.
/// `DirectoryFileStore` makes these steps with system calls relative to its folder's descriptor;
/// the crash tests run them on `SimulatedDisk`.
public protocol PartialFolder: DurableDisk {
    /// Gives the synced file `name` its final name, `finalName` or a numbered one as
    /// `DirectoryFileStore` places files, and removes `name` (not yet durable: `syncFolder`);
    /// returns the name it got.
    func commit(_ name: String, as finalName: String) throws(StorageError) -> String
    /// The names of this receiver's temporaries and records in the folder (`TemporaryNames`).
    func ownNames() -> [String]
}
