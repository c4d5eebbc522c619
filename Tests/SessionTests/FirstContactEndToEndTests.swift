import Keys
import MemoryTransport
import Pipeline
import TestDoubles
import Testing
import Transfer
@testable import Session

@Test func anApprovedStrangerSeesTheSameCodeItsFileArrivesAndItIsTrustedAfterwards() throws {
    var run = SessionPair()
    try run.connect()
    run.run(for: .seconds(2))
    let request = try #require(run.request)
    #expect(request.key == run.senderID.publicKey)
    #expect(request.offered == OfferedItem(kind: .file, name: "hello.txt", size: 8))
    #expect(run.senderCode == request.code)
    #expect(request.code.count == 7)
    #expect(run.receiver.isAwaitingApproval)
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
    #expect(run.senderError == nil && run.receiverError == nil)

    #expect(try run.receiver.approve(name: "bob", now: run.now))
    run.run(for: .seconds(5))
    #expect(run.sender.isFinished, "\(String(describing: run.senderError)) \(String(describing: run.receiverError))")
    #expect(run.store.committed["hello.txt"] == Array("hi there".utf8))
    #expect(run.receiverEvents.contains(.authenticated(sender: "bob", fingerprint: run.senderID.publicKey.fingerprint)))

    // The next connection: trusted, nobody is asked.
    run.receiver.linkLost(now: run.now)
    run.receiverEvents = []
    run.senderEvents = []
    try run.connect(file: "second.txt")
    run.run(for: .seconds(5))
    #expect(run.request == nil && run.senderCode == nil)
    #expect(run.store.committed["second.txt"] == Array("hi there".utf8))
}

@Test func aDeclinedStrangerGetsTheTypedRefusalAndNothingIsKept() throws {
    var run = SessionPair()
    try run.connect()
    run.run(for: .seconds(2))
    #expect(run.request != nil)
    try run.receiver.decline(now: run.now)
    run.run(for: .seconds(5))
    #expect(run.senderError == .notApprovedByPeer)
    #expect(run.receiverEvents.contains(.refused(.notApproved(fingerprint: run.senderID.publicKey.fingerprint))))
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
    // Still a stranger: the next connection asks again.
    run.receiver.linkLost(now: run.now)
    run.receiverEvents = []
    try run.connect()
    run.run(for: .seconds(2))
    #expect(run.request != nil)
}

@Test func noAnswerInTimeRefusesAndTheIdleTimeoutDoesNotCutTheWaitShort() throws {
    var run = SessionPair()
    try run.connect()
    // Far past the 30 s idle timeout: both sides still wait.
    run.run(for: .seconds(100))
    #expect(run.senderError == nil && run.receiverError == nil)
    #expect(run.receiver.isAwaitingApproval)
    run.run(for: .seconds(25))
    #expect(run.senderError == .notApprovedByPeer)
    #expect(run.receiverEvents.contains(.refused(.approvalTimedOut(fingerprint: run.senderID.publicKey.fingerprint))))
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
}

@Test func theSenderGivesUpAfterItsOwnLimit() throws {
    var run = SessionPair(receiverConfiguration: .init(approvalTimeout: .seconds(600)))
    try run.connect()
    run.run(for: .seconds(135))
    #expect(run.senderError == .approvalTimeout)
}

@Test func aSenderThatDoesNotAskIsRefusedAsBefore() throws {
    var run = SessionPair()
    try run.connect(offers: [.pipelining])
    run.run(for: .seconds(3))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.request == nil)
    #expect(run.receiverEvents.contains(.refused(.unknownSender(fingerprint: run.senderID.publicKey.fingerprint))))
}

@Test func aReceiverThatDoesNotAskRefusesAStrangerAsBefore() throws {
    var run = SessionPair(asks: false)
    #expect(!run.receiver.extensions.contains(.firstContact))
    // Even a sender that asks for it anyway.
    try run.connect(offers: [.firstContact])
    run.run(for: .seconds(3))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.request == nil)
}

@Test func aTrustedSenderIsNeverPending() throws {
    var run = SessionPair()
    try run.connect()
    run.run(for: .seconds(2))
    _ = try run.receiver.approve(name: "bob", now: run.now)
    run.run(for: .seconds(5))
    run.receiver.linkLost(now: run.now)
    run.senderEvents = []
    try run.connect(file: "again.txt")
    run.run(for: .seconds(5))
    #expect(!run.senderEvents.contains { if case .awaitingApproval = $0 { true } else { false } })
    #expect(run.store.committed["again.txt"] != nil)
}

/// Two handshakes (as a machine in the middle makes: one with each side) show different codes;
/// the user who sees them differ declines, and nothing is trusted.
@Test func differentHandshakesShowDifferentCodesAndAMismatchIsDeclined() throws {
    var run = SessionPair()
    try run.connect()
    run.run(for: .seconds(2))
    let first = try #require(run.request?.code)
    try run.receiver.decline(now: run.now)
    run.run(for: .seconds(3))
    run.receiver.linkLost(now: run.now)
    run.receiverEvents = []
    run.senderEvents = []
    try run.connect()
    run.run(for: .seconds(2))
    let second = try #require(run.request?.code)
    #expect(first != second)
    #expect(run.senderCode == second)
    // The receiver's screen shows `second`; suppose the sender's showed `first`: the user says no.
    try run.receiver.decline(now: run.now)
    run.run(for: .seconds(3))
    #expect(run.senderError == .notApprovedByPeer)
    #expect(run.store.committed.isEmpty)
}

/// A yes that came after its connection ended (the driver wrote the key): from the next
/// connection on the sender is trusted without a question.
@Test func aKeyTrustedBetweenConnectionsIsNotAskedAbout() throws {
    var run = SessionPair()
    try run.connect()
    run.run(for: .seconds(2))
    #expect(run.request != nil)
    run.receiver.linkLost(now: run.now)
    run.receiver.trust(.init(name: "late", key: run.senderID.publicKey))
    run.receiverEvents = []
    run.senderEvents = []
    try run.connect(file: "late.txt")
    run.run(for: .seconds(5))
    #expect(run.request == nil)
    #expect(run.receiverEvents.contains(.authenticated(sender: "late", fingerprint: run.senderID.publicKey.fingerprint)))
    #expect(run.store.committed["late.txt"] != nil)
}
