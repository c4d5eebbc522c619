import Keys
import MemoryTransport
import Pipeline
import TestDoubles
import Testing
import Transfer
@testable import Session

/// `notTrusted` (docs/protocol.md §8.7) with the whole stack on a virtual clock: a receiver that
/// proves its key to strangers tells a sender it does not trust so in message 2, and the sender
/// knows that the receiver it pinned refused it.

@Test func aStrangerThatAsksIsToldNotTrustedByTheReceiverItPinned() throws {
    var run = SessionPair(asks: false, trusted: false, provesKey: true)
    #expect(run.receiver.extensions.contains(.notTrusted))
    try run.connect()
    run.run(for: .seconds(5))
    #expect(run.senderError == .notTrustedByPeer)
    #expect(run.receiverEvents == [.refused(.unknownSender(fingerprint: run.senderID.publicKey.fingerprint))])
    #expect(!run.receiverEvents.contains { if case .authenticated = $0 { true } else { false } })
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
    // The receiver ends the connection as after a refusal.
    #expect(run.receiver.connectionComplete || run.receiverError == .refusedSender(.unknownSender(fingerprint: run.senderID.publicKey.fingerprint)))
}

@Test func anOlderSenderThatDoesNotAskGetsTheOneByteRefusal() throws {
    var run = SessionPair(asks: false, trusted: false, provesKey: true)
    try run.connect(offers: [])
    run.run(for: .seconds(5))
    #expect(run.senderError == .refusedByPeer)
}

@Test func aReceiverThatDoesNotProveItsKeyRefusesWithOneByte() throws {
    var run = SessionPair(asks: false, trusted: false, provesKey: false)
    #expect(!run.receiver.extensions.contains(.notTrusted))
    // Even a sender that asks (it read a characteristic someone in range forged) gets the byte.
    try run.connect(offers: [.notTrusted])
    run.run(for: .seconds(5))
    #expect(run.senderError == .refusedByPeer)
}

@Test func aTrustedSenderIsServedAsBefore() throws {
    var run = SessionPair(asks: false, trusted: true, provesKey: true)
    try run.connect()
    run.run(for: .seconds(5))
    #expect(run.sender.isFinished, "\(String(describing: run.senderError)) \(String(describing: run.receiverError))")
    #expect(run.store.committed["hello.txt"] == Array("hi there".utf8))
}

/// A receiver that asks its user about strangers asks about one that asks for both: first
/// contact comes before a refusal.
@Test func firstContactComesBeforeNotTrusted() throws {
    var run = SessionPair(asks: true, trusted: false, provesKey: true)
    try run.connect()
    run.run(for: .seconds(2))
    #expect(run.senderCode != nil && run.request != nil)
    #expect(run.senderError == nil)
}

/// A sender that pinned another key cannot be answered with a message 2 (the receiver cannot
/// even read message 1): the one-byte refusal, as before.
@Test func aSenderPinningAnotherKeyGetsTheOneByteRefusal() throws {
    let other = Identity.generate()
    var run = SessionPair(asks: false, trusted: true, provesKey: true)
    try run.receiver.accept(maxDatagramSize: 244, now: run.now, wallClock: SessionPair.wallClock(run.now))
    run.sender = SenderSession(identity: run.senderID, receiverKey: other.publicKey,
                               files: [MemoryFileSource(name: "hello.txt", bytes: Array("hi".utf8))])
    try run.sender.connect(maxDatagramSize: 244, now: run.now, wallClock: SessionPair.wallClock(run.now),
                           receiverExtensions: run.receiver.extensions)
    run.run(for: .seconds(5))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.receiverEvents == [.refused(.malformedHandshake)])
}
