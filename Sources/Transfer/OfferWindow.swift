import DequeModule

/// The items a sender offered and the receiver has not settled (`confirm` or `reject`), oldest
/// first: the receiver answers in this order. It decides when the next offer may go (when nothing
/// offered is still being sent; with `pipelining`, up to `maxFilesInFlight` at once) and holds
/// the transfer window (file bytes sent and not acknowledged, over every file in flight), and it
/// checks every answer against what was offered.
struct OfferWindow {
    private var unsettled: Deque<Outgoing> = []

    var isEmpty: Bool { unsettled.isEmpty }
    var first: Outgoing? { unsettled.first }

    subscript(i: Int) -> Outgoing {
        get { unsettled[i] }
        set { unsettled[i] = newValue }
    }

    /// Items not offered again on this connection (after a reconnect) wait here.
    var hasUnoffered: Bool { unsettled.contains { !$0.link.offered } }

    /// The file whose data (or `done`) goes next: the one offered file not finished sending, once
    /// it may stream.
    var streamingIndex: Int? {
        guard let i = unsettled.lastIndex(where: { $0.link.offered }), unsettled[i].mayStream else { return nil }
        return i
    }

    /// Whether the next offer may go now: nothing offered on this connection is still being sent
    /// or waiting for its `accept`, and either nothing is in flight or the receiver takes pipelined
    /// offers.
    func mayOffer(pipelining: Bool) -> Bool {
        guard !unsettled.contains(where: \.outstanding) else { return false }
        let inFlight = unsettled.count { $0.link.offered }
        return inFlight == 0 || (pipelining && inFlight < TransferSender.maxFilesInFlight)
    }

    /// Whether more file bytes may go: fewer than `transferWindow` are unacknowledged.
    var isOpen: Bool {
        var unacknowledged: UInt64 = 0
        for file in unsettled where file.link.offered { unacknowledged += file.nextOffset - file.acknowledged }
        return unacknowledged < TransferConstants.transferWindow
    }

    /// The oldest item not yet offered on this connection, now offered (a resume: a file waits
    /// for its `accept`); nil if every item in the window was.
    mutating func reoffer() -> Outgoing? {
        guard let i = unsettled.firstIndex(where: { !$0.link.offered }) else { return nil }
        unsettled[i].link.offered = true
        if unsettled[i].carriesNoData { unsettled[i].markSentWhole() }
        return unsettled[i]
    }

    /// A new item, just offered.
    mutating func append(_ file: Outgoing) { unsettled.append(file) }

    /// The link is gone; the next connection offers every item again, oldest first.
    mutating func connectionLost() {
        for i in unsettled.indices { unsettled[i].link = .init() }
    }

    // MARK: - Answers

    /// The receiver's `accept` of `id` at `offset`: the item, and where its transfer resumed (0 for
    /// a fresh start).
    mutating func accept(_ id: TransferID, offset: UInt64) throws(TransferError) -> (Outgoing, resumedAt: UInt64) {
        // Answers come in the order of the offers.
        guard let i = unsettled.firstIndex(where: { $0.link.offered && !$0.link.accepted }), unsettled[i].id == id else {
            throw .unexpected(.accept)
        }
        var file = unsettled[i]
        if file.link.eager {
            // Its data is on the way from byte 0: only a fresh start fits.
            guard offset == 0 else { throw .cannotResume(offset: offset) }
        } else {
            let resumable = file.resumesEarlierRun ? max(file.highestSent, file.source.size ?? 0) : file.highestSent
            guard offset <= resumable else { throw .cannotResume(offset: offset) }
            // A stream forgets what the receiver acknowledged; it cannot go back before that.
            if file.source.size == nil, offset < file.acknowledged { throw .cannotResume(offset: offset) }
            file.nextOffset = offset
            file.acknowledged = offset
        }
        let resumedAt = offset
        file.link.accepted = true
        unsettled[i] = file
        return (file, resumedAt)
    }

    /// The receiver's `ack` of `received` bytes of `id`: the item if that is news.
    mutating func ack(_ id: TransferID, received: UInt64) throws(TransferError) -> Outgoing? {
        guard let i = unsettled.firstIndex(where: { $0.link.accepted && $0.id == id }) else { throw .unexpected(.ack) }
        guard received <= unsettled[i].highestSent else { throw .ackBeyondSent }
        guard received > unsettled[i].acknowledged else { return nil }
        unsettled[i].acknowledged = received
        unsettled[i].source.release(before: received)
        return unsettled[i]
    }

    /// The receiver's `confirm` of `id`: the oldest item, sent whole, now settled.
    mutating func confirm(_ id: TransferID) throws(TransferError) -> Outgoing {
        guard let file = unsettled.first, file.id == id, file.link.accepted, file.link.doneSent else {
            throw .unexpected(.confirm)
        }
        return unsettled.removeFirst()
    }

    /// The receiver's `reject` of `id` (an offer, or a file whose storing failed): the oldest
    /// item, now settled; its remaining data and `done` are not sent.
    mutating func reject(_ id: TransferID) throws(TransferError) -> Outgoing {
        guard let file = unsettled.first, file.id == id, file.link.offered else { throw .unexpected(.reject) }
        return unsettled.removeFirst()
    }
}
