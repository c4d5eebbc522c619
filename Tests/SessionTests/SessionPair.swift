import Keys
import MemoryTransport
import Pipeline
import TestDoubles
import Testing
import Transfer
@testable import Session

/// A sender and a receiver session with the whole stack on a virtual clock, connected again and
/// again: by default a receiver that asks about strangers (`asksAboutStrangers`, first contact,
/// docs/protocol.md §8.5) and a sender it does not know; with `trusted`, one it trusts.
struct SessionPair {
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

    /// `provesKey`: the receiver tells a sender it does not trust so in message 2 (`notTrusted`, §8.7).
    init(asks: Bool = true, trusted: Bool = false, provesKey: Bool = false, receiverConfiguration: SessionConfiguration = .init()) {
        let peers = trusted ? [TrustStore.Peer(name: "alice", key: senderID.publicKey)] : []
        receiver = ReceiverSession(identity: receiverID, trust: TrustStore(peers: peers), store: store,
                                   configuration: receiverConfiguration, asksAboutStrangers: asks, provesKeyToStrangers: provesKey)
        sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                               files: [MemoryFileSource(name: "hello.txt", bytes: Array("hi there".utf8))])
    }

    /// A new connection of a new sender session with the same key; `offers`: what it reads from
    /// the receiver's extensions characteristic; `busy`: the receiver has no place for it.
    mutating func connect(file: String = "hello.txt", offers: TransferExtensions? = nil, busy: BusyAnswer? = nil) throws {
        sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                               files: [MemoryFileSource(name: file, bytes: Array("hi there".utf8))])
        senderError = nil
        receiverError = nil
        try receiver.accept(maxDatagramSize: 244, now: now, wallClock: Self.wallClock(now), busy: busy)
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
struct Halting<E: DatagramEndpoint>: DatagramEndpoint {
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
