/// The sender's side of the extensions (docs/protocol.md §8) on each connection: what it asks
/// for, what the receiver granted, and how the receiver answered the opening (`pending`: its user
/// decides about this sender first, §8.5).
struct ExtensionRequest {
    /// The extensions this sender can use.
    let usable: TransferExtensions
    /// On this connection: asked for, and granted (nil before the receiver's `hello`).
    private var requested: TransferExtensions = []
    private var granted: TransferExtensions?
    /// The receiver has answered something on this connection (a `hello` can only come first).
    private var answered = false
    /// The receiver answered the opening offer (`accept` or `reject`); before that, whether it
    /// said `pending`.
    private var openingAnswered = false
    private(set) var isAwaitingApproval = false

    init(usable: TransferExtensions) {
        self.usable = usable
    }

    /// The extensions granted on this connection (none before the receiver's answer).
    var extensions: TransferExtensions { granted ?? [] }

    /// A new connection to a receiver that offers `receiverOffers`: returns what to ask for.
    mutating func open(receiverOffers: TransferExtensions) -> TransferExtensions {
        requested = usable.intersection(receiverOffers)
        connectionLost()
        return requested
    }

    mutating func connectionLost() {
        granted = nil
        answered = false
        openingAnswered = false
        isAwaitingApproval = false
    }

    /// The receiver said something on this connection.
    mutating func heardFromReceiver() { answered = true }

    /// The receiver answered the opening offer: no `pending` may come after this.
    mutating func openingWasAnswered() {
        openingAnswered = true
        isAwaitingApproval = false
    }

    /// The receiver's `hello`: only in message 2, before the answer, and never more than was asked for.
    mutating func receiveHello(_ offered: TransferExtensions) throws(TransferError) {
        guard granted == nil, !answered, !requested.isEmpty, requested.isSuperset(of: offered) else {
            throw .unexpected(.hello)
        }
        granted = offered
    }

    /// The receiver's `busy`: only in message 2, right after a `hello` that granted `busy`, in place
    /// of the answer to the opening.
    func checkBusy() throws(TransferError) {
        guard extensions.contains(.busy), !openingAnswered, !isAwaitingApproval else { throw .unexpected(.busy) }
    }

    /// The receiver's `notTrusted`: only in message 2, right after a `hello` that granted
    /// `notTrusted`, in place of the answer to the opening.
    func checkNotTrusted() throws(TransferError) {
        guard extensions.contains(.notTrusted), !openingAnswered, !isAwaitingApproval else { throw .unexpected(.notTrusted) }
    }

    /// The receiver's `pending`: only in message 2, right after a `hello` that granted `firstContact`.
    mutating func receivePending() throws(TransferError) {
        guard extensions.contains(.firstContact), !openingAnswered, !isAwaitingApproval else { throw .unexpected(.pending) }
        isAwaitingApproval = true
    }
}
