/// Where a receiver keeps, across restarts, the transfers it completed (`CompletedTransfers`),
/// so that a sender that never heard its `confirm` (a crash or power cut right after the commit)
/// is answered with the stored name when it offers the file again, instead of having it stored a
/// second time. `remember` is best effort: losing one costs a second copy, never a wrong file.
/// It may be called from several threads at once (a receiver's connections commit on workers of
/// their own, `StorageWork`).
public protocol CompletedMemory: AnyObject {
    /// What earlier runs remembered, oldest first.
    var recalled: [CompletedTransfer] { get }
    func remember(_ transfer: CompletedTransfer) throws
}

/// One completed transfer: whose, which, and where it went.
public struct CompletedTransfer: Equatable, Sendable {
    public let senderKey: [UInt8]
    public let id: TransferID
    public let storedName: String
    public let size: UInt64

    public init(senderKey: [UInt8], id: TransferID, storedName: String, size: UInt64) {
        self.senderKey = senderKey
        self.id = id
        self.storedName = storedName
        self.size = size
    }
}
