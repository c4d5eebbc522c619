/// One connection of a receiver, as its `ReceiverLedger` knows it: what it holds (the partial
/// file it is receiving, the folders it is filling) is passed by when another connection expires,
/// evicts or abandons things. Handed out by `ReceiverLedger.newHolder()`, one per `TransferReceiver`.
struct LedgerHolder: Hashable {
    let number: UInt64
}
