/// The sender of the current connection, as the handshake authenticated it: its name for events
/// and its key, which scopes everything it left behind (partial files, folders, completions).
struct AuthenticatedSender {
    var name: String
    var key: [UInt8]

    /// Where this sender's transfer `id` is kept: nobody else can continue it.
    func key(for id: TransferID) -> PartialTransfers.Key { .init(senderKey: key, id: id) }
}
