/// Whose a folder being received is and how it arrived (extension `folders`, docs/protocol.md
/// §8.4): what a store that keeps folders across runs records, so that the sender's items are
/// recognised after a restart.
public struct TreeOrigin: Equatable, Sendable {
    /// The authenticated sender's key.
    public let senderKey: [UInt8]
    /// The tree id, and the transfer id of the `folder` item that opened it.
    public let tree: TransferID
    public let folder: TransferID
    /// The top folder's path as it travelled.
    public let top: [UInt8]

    public init(senderKey: [UInt8], tree: TransferID, folder: TransferID, top: [UInt8]) {
        self.senderKey = senderKey
        self.tree = tree
        self.folder = folder
        self.top = top
    }
}
