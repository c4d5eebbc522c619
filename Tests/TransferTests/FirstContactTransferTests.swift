import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// First contact at the transfer layer (docs/protocol.md §8.5): the `pending` message, where it
/// may stand, and reject reason 6.

@Test func pendingIsOneTypeByteAndNothingElse() throws {
    #expect(TransferMessage.pending.encoded() == [0x0F])
    #expect(try TransferMessage(decoding: [0x0F]) == .pending)
    #expect(throws: TransferMessageError.trailingBytes) { try TransferMessage(decoding: [0x0F, 0x00]) }
    #expect(TransferMessage.pending.wireLength == 1)
    #expect(!TransferMessage.pending.batchable)
}

@Test func aBatchMayNotCarryPending() {
    // batch [pending, bye-less data]: 0x0E, then length 1, 0x0F.
    #expect(throws: TransferMessageError.badField) { try TransferMessage(decoding: [0x0E, 0x00, 0x01, 0x0F]) }
}

@Test func rejectReasonSixIsNotApproved() throws {
    let bytes = [0x07] + sampleID.bytes + [0x06]
    #expect(try TransferMessage(decoding: bytes) == .reject(id: sampleID, reason: .notApproved))
    #expect(throws: TransferMessageError.badField) { try TransferMessage(decoding: [0x07] + sampleID.bytes + [0x07]) }
}

@Test func firstContactIsKnownAndNamed() {
    #expect(TransferExtensions.firstContact.rawValue == 8)
    #expect(TransferExtensions.known.contains(.firstContact))
    #expect(TransferExtensions.firstContact.description == "first contact")
}

private func sender() -> TransferSender {
    TransferSender(files: [MemoryFileSource(name: "a.txt", bytes: [1, 2, 3])], makeHasher: { TestHasher() },
                   makeID: { sampleID })
}

@Test func aSenderAsksForFirstContactOnlyWhereTheReceiverListsIt() {
    var s = sender()
    #expect(s.openingMessages(receiverOffers: []).count == 1)
    var t = sender()
    #expect(t.openingMessages(receiverOffers: [.firstContact]).first == .hello(.firstContact))
}

@Test func pendingHoldsTheSenderUntilTheAnswer() throws {
    var s = sender()
    _ = s.openingMessages(receiverOffers: [.firstContact])
    try s.receive(.hello(.firstContact))
    try s.receive(.pending)
    #expect(s.isAwaitingApproval)
    #expect(s.takeEvents() == [.awaitingApproval])
    #expect(!s.hasMessageReady)
    #expect(try s.nextMessage() == nil)
    try s.receive(.accept(id: sampleID, offset: 0))
    #expect(!s.isAwaitingApproval)
    #expect(s.hasMessageReady)
}

@Test func pendingIsOutOfPlaceUnlessGrantedAndBeforeTheAnswer() throws {
    // Not granted.
    var s = sender()
    _ = s.openingMessages(receiverOffers: [.firstContact])
    try s.receive(.hello([]))
    #expect(throws: TransferError.unexpected(.pending)) { try s.receive(.pending) }
    // Twice.
    var t = sender()
    _ = t.openingMessages(receiverOffers: [.firstContact])
    try t.receive(.hello(.firstContact))
    try t.receive(.pending)
    #expect(throws: TransferError.unexpected(.pending)) { try t.receive(.pending) }
    // After the answer.
    var u = sender()
    _ = u.openingMessages(receiverOffers: [.firstContact])
    try u.receive(.hello(.firstContact))
    try u.receive(.accept(id: sampleID, offset: 0))
    #expect(throws: TransferError.unexpected(.pending)) { try u.receive(.pending) }
}

@Test func notApprovedEndsTheSessionOnlyAfterPending() throws {
    var s = sender()
    _ = s.openingMessages(receiverOffers: [.firstContact])
    try s.receive(.hello(.firstContact))
    try s.receive(.pending)
    let other = TransferID(bytes: Array(repeating: 9, count: 16))!
    #expect(throws: TransferError.unexpected(.reject)) { try s.receive(.reject(id: other, reason: .notApproved)) }
    #expect(throws: TransferError.notApproved) { try s.receive(.reject(id: sampleID, reason: .notApproved)) }
    var t = sender()
    _ = t.openingMessages(receiverOffers: [.firstContact])
    try t.receive(.hello(.firstContact))
    #expect(throws: TransferError.unexpected(.reject)) { try t.receive(.reject(id: sampleID, reason: .notApproved)) }
}

@Test func aReceiverGrantsFirstContactOnlyWhenItAsks() {
    let asking = TransferReceiver(store: MemoryFileStore(), makeHasher: { TestHasher() }, firstContact: true)
    let plain = TransferReceiver(store: MemoryFileStore(), makeHasher: { TestHasher() })
    #expect(asking.grantable.contains(.firstContact))
    #expect(!plain.grantable.contains(.firstContact))
    #expect(plain.granting([.firstContact, .pipelining]) == .pipelining)
}

@Test func aReceiverTakesNoPendingFromASender() throws {
    var r = TransferReceiver(store: MemoryFileStore(), makeHasher: { TestHasher() }, firstContact: true)
    _ = try r.begin(sender: "s", senderKey: [1], opening: [.offer(.init(id: sampleID, size: 3, name: "a"))], now: .zero)
    #expect(throws: TransferError.unexpected(.pending)) { try r.receive(.pending, now: .zero) }
}

/// What `begin` takes is judged before the user is asked about a stranger (`opens`).
@Test func opensTakesAnOfferAndFolderItemsOnlyWhereFoldersAreGranted() {
    let r = TransferReceiver(store: MemoryFileStore(), makeHasher: { TestHasher() }, firstContact: true)
    let offer = TransferMessage.offer(.init(id: sampleID, size: 1, name: "a"))
    let entry = TransferMessage.entry(.init(id: sampleID, tree: sampleID, size: 1, executable: false, path: Array("t/a".utf8)))
    #expect(r.opens([offer]))
    #expect(r.opens([.hello(.firstContact), offer]))
    // This receiver takes no folders (no tree store): a folder item cannot open, asked or not.
    #expect(!r.opens([.hello([.firstContact, .folders]), entry]))
    #expect(!r.opens([entry]))
    #expect(!r.opens([.hello(.firstContact)]))
    #expect(!r.opens([offer, offer]))
}
