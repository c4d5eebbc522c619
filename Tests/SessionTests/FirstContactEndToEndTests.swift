import Keys
import MemoryTransport
import Pipeline
import TestDoubles
import Testing
import Transfer
@testable import Session

/// First contact (docs/protocol.md §8.5) with the whole stack on a virtual clock: a receiver that
/// asks (`asksAboutStrangers`) and a sender it does not know.
private struct FirstContact {
    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    let store = MemoryFileStore()
    var receiver: ReceiverSession
    var sender: SenderSession
    var now = Instant.zero
    var senderEvents: [SenderSession.Event] = []
    var receiverEvents: [ReceiverSession.Event] = []
    var senderError: SessionError?
    var receiverError: SessionError?

    init(asks: Bool = true, receiverConfiguration: SessionConfiguration = .init()) {
        receiver = ReceiverSession(identity: receiverID, trust: TrustStore(peers: []), store: store,
                                   configuration: receiverConfiguration, asksAboutStrangers: asks)
        sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                               files: [MemoryFileSource(name: "hello.txt", bytes: Array("hi there".utf8))])
    }

    /// A new connection of a new sender session with the same key; `offers`: what it reads from
    /// the receiver's extensions characteristic.
    mutating func connect(file: String = "hello.txt", offers: TransferExtensions? = nil) throws {
        sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                               files: [MemoryFileSource(name: file, bytes: Array("hi there".utf8))])
        senderError = nil
        receiverError = nil
        try receiver.accept(maxDatagramSize: 244, now: now, wallClock: Self.wallClock(now))
        try sender.connect(maxDatagramSize: 244, now: now, wallClock: Self.wallClock(now),
                           receiverExtensions: offers ?? receiver.extensions)
    }

    static func wallClock(_ now: Instant) -> UInt64 { 1_763_000_000_000_000_000 + now.nanoseconds }

    /// Runs both sides on the virtual network (`VirtualNetwork.run`) for `duration`, or until
    /// both stopped (an error, or finished). A side that fails keeps its error and falls silent;
    /// the other runs on.
    mutating func run(for duration: Duration) {
        let end = now.advanced(by: duration)
        var network = VirtualNetwork.perfect(at: now)
        var a = Halting(sender, error: senderError)
        var b = Halting(receiver, error: receiverError)
        var events: (sender: [SenderSession.Event], receiver: [ReceiverSession.Event]) = ([], [])
        let ending = try? network.run(&a, &b, until: end) { a, b, _, _ in
            events.sender += a.endpoint.takeEvents()
            events.receiver += b.endpoint.takeEvents()
            return a.endpoint.isFinished && b.endpoint.connectionComplete
        }
        (sender, senderError) = (a.endpoint, a.error)
        (receiver, receiverError) = (b.endpoint, b.error)
        now = ending == .done ? network.now : max(network.now, end)
        senderEvents += events.sender + sender.takeEvents()
        receiverEvents += events.receiver + receiver.takeEvents()
    }

    var request: ApprovalRequest? {
        for case .approvalNeeded(let request) in receiverEvents { return request }
        return nil
    }

    var senderCode: String? {
        for case .awaitingApproval(let code) in senderEvents { return code }
        return nil
    }
}

/// An endpoint that keeps its first error and falls silent after it (a test that watches both
/// sides of a failure).
private struct Halting<E: DatagramEndpoint>: DatagramEndpoint {
    typealias Failure = Never
    var endpoint: E
    var error: E.Failure?

    init(_ endpoint: E, error: E.Failure?) {
        self.endpoint = endpoint
        self.error = error
    }

    mutating func nextDatagram(now: Instant) -> [UInt8]? {
        guard error == nil else { return nil }
        do { return try endpoint.nextDatagram(now: now) } catch { self.error = error; return nil }
    }

    mutating func receive(datagram: [UInt8], now: Instant) {
        guard error == nil else { return }
        do { try endpoint.receive(datagram: datagram, now: now) } catch { self.error = error }
    }

    mutating func handleTimers(now: Instant) {
        guard error == nil else { return }
        do { try endpoint.handleTimers(now: now) } catch { self.error = error }
    }

    var nextDeadline: Instant? { error == nil ? endpoint.nextDeadline : nil }
}

@Test func anApprovedStrangerSeesTheSameCodeItsFileArrivesAndItIsTrustedAfterwards() throws {
    var run = FirstContact()
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
    var run = FirstContact()
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
    var run = FirstContact()
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
    var run = FirstContact(receiverConfiguration: .init(approvalTimeout: .seconds(600)))
    try run.connect()
    run.run(for: .seconds(135))
    #expect(run.senderError == .approvalTimeout)
}

@Test func aSenderThatDoesNotAskIsRefusedAsBefore() throws {
    var run = FirstContact()
    try run.connect(offers: [.pipelining])
    run.run(for: .seconds(3))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.request == nil)
    #expect(run.receiverEvents.contains(.refused(.unknownSender(fingerprint: run.senderID.publicKey.fingerprint))))
}

@Test func aReceiverThatDoesNotAskRefusesAStrangerAsBefore() throws {
    var run = FirstContact(asks: false)
    #expect(!run.receiver.extensions.contains(.firstContact))
    // Even a sender that asks for it anyway.
    try run.connect(offers: [.firstContact])
    run.run(for: .seconds(3))
    #expect(run.senderError == .refusedByPeer)
    #expect(run.request == nil)
}

@Test func aTrustedSenderIsNeverPending() throws {
    var run = FirstContact()
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
    var run = FirstContact()
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
    var run = FirstContact()
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
