import Keys
import Pipeline
import Testing
import Transfer
@testable import Session

/// `busy` (docs/protocol.md §8.6) with the whole stack on a virtual clock: a receiver at its cap
/// (`accept(busy:)`) tells a trusted sender when to come back, in message 2.

@Test func aTrustedSenderThatAsksIsToldBusyAndNothingIsServed() throws {
    var run = SessionPair(asks: false, trusted: true)
    #expect(run.receiver.extensions.contains(.busy))
    try run.connect(busy: BusyAnswer(retryAfter: .milliseconds(4200), ahead: 2))
    run.run(for: .seconds(5))
    #expect(run.senderError == .receiverBusy(retryAfter: .seconds(5), ahead: 2))
    #expect(run.receiverEvents == [.refused(.toldBusy(sender: "alice"))])
    #expect(!run.receiverEvents.contains { if case .authenticated = $0 { true } else { false } })
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
    // The receiver ends the connection as after a refusal.
    #expect(run.receiver.connectionComplete || run.receiverError == .refusedSender(.toldBusy(sender: "alice")))
}

@Test func theSameSenderComingBackToAFreeSlotIsServed() throws {
    var run = SessionPair(asks: false, trusted: true)
    try run.connect(busy: BusyAnswer(retryAfter: .seconds(1), ahead: 0))
    run.run(for: .seconds(3))
    #expect(run.senderError == .receiverBusy(retryAfter: .seconds(1), ahead: 0))
    run.receiver.linkLost(now: run.now)
    try run.connect()
    run.run(for: .seconds(5))
    #expect(run.sender.isFinished, "\(String(describing: run.senderError)) \(String(describing: run.receiverError))")
    #expect(run.store.committed["hello.txt"] == Array("hi there".utf8))
}

@Test func anOlderSenderThatDoesNotAskGetsNoAnswerUntilItsHandshakeTimesOut() throws {
    var run = SessionPair(asks: false, trusted: true)
    // It read no extensions characteristic (or one without `busy`): no `hello` asks for it.
    try run.connect(offers: [], busy: BusyAnswer(retryAfter: .seconds(3), ahead: 0))
    run.run(for: .seconds(12))
    #expect(run.senderError == .handshakeTimeout)
    #expect(run.receiverEvents.isEmpty)
    #expect(run.store.committed.isEmpty && run.store.openTemporaries == 0)
}

@Test func anUntrustedSenderIsRefusedAsUsualEvenWhenTheReceiverIsBusy() throws {
    var run = SessionPair(asks: false, trusted: false)
    try run.connect(busy: BusyAnswer(retryAfter: .seconds(3), ahead: 0))
    run.run(for: .seconds(5))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.receiverEvents == [.refused(.unknownSender(fingerprint: run.senderID.publicKey.fingerprint))])
}

@Test func aStrangerAtFirstContactIsToldBusyWithoutAQuestion() throws {
    var run = SessionPair(asks: true, trusted: false)
    try run.connect(busy: BusyAnswer(retryAfter: .seconds(3), ahead: 1))
    run.run(for: .seconds(5))
    #expect(run.senderError == .receiverBusy(retryAfter: .seconds(3), ahead: 1))
    #expect(run.request == nil && run.senderCode == nil)
    #expect(run.receiverEvents == [.refused(.toldBusy(sender: run.senderID.publicKey.fingerprint))])
}

@Test func aReplayedMessageOneStaysARefusalWhenTheReceiverIsBusy() throws {
    // The replay guard judges message 1 before `busy` is said: a message 1 told busy once is a
    // replay the next time, like any accepted message 1.
    var run = SessionPair(asks: false, trusted: true)
    try run.connect(busy: BusyAnswer(retryAfter: .seconds(1), ahead: 0))
    var firstMessage: [[UInt8]] = []
    while let datagram = try run.sender.nextDatagram(now: run.now) { firstMessage.append(datagram) }
    for datagram in firstMessage { try run.receiver.receive(datagram: datagram, now: run.now) }
    #expect(run.receiver.takeEvents() == [.refused(.toldBusy(sender: "alice"))])
    run.receiver.linkLost(now: run.now)
    try run.receiver.accept(maxDatagramSize: 244, now: run.now, wallClock: SessionPair.wallClock(run.now),
                            busy: BusyAnswer(retryAfter: .seconds(1), ahead: 0))
    for datagram in firstMessage { try run.receiver.receive(datagram: datagram, now: run.now) }
    #expect(run.receiver.takeEvents() == [.refused(.replayedHandshake(sender: "alice"))])
}

@Test func busyAnswerRoundsUpAndClamps() {
    #expect(BusyAnswer(retryAfter: .zero, ahead: -3) == BusyAnswer(retryAfter: .seconds(1), ahead: 0))
    #expect(BusyAnswer(retryAfter: .milliseconds(1001), ahead: 300).retryAfterSeconds == 2)
    #expect(BusyAnswer(retryAfter: .milliseconds(1001), ahead: 300).ahead == 255)
    #expect(BusyAnswer(retryAfter: .seconds(3600), ahead: 0).retryAfterSeconds == BusyAnswer.maxRetryAfterSeconds)
    // A wire vector's fields are kept as written: another receiver may ask for up to an hour.
    #expect(BusyAnswer(retryAfterSeconds: 3600, ahead: 7).retryAfterSeconds == 3600)
}
