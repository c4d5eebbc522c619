#if canImport(Glibc)
import Glibc
#endif
import Keys

/// The receivers this user pinned: `NAME.pub` files in `$XDG_CONFIG_HOME/blesend/receivers/`, else
/// `~/.config/blesend/receivers/`, read with the trust store's checks (`TrustStore.load`).
/// `blesend scan` names the private-discovery receivers that list us with them.
enum PinnedReceivers {
    static var defaultDirectory: String { KeyLocation.defaultDirectory + "/receivers" }

    /// The pinned receivers; none when the directory does not exist. (The one place that reads
    /// the directory: the address book replaces this function when it lands.)
    static func load(directory: String = defaultDirectory) throws(KeyError) -> [TrustStore.Peer] {
        guard access(directory, F_OK) == 0 else { return [] }
        return try TrustStore.load(directory: directory).peers
    }
}
