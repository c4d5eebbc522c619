import Framing
import Keys
import MemoryTransport
import Pipeline
import Session
import Synchronization
import SessionRunner
import TestDoubles
import Testing
import Transfer

/// Hands a non-Sendable value to one task at a time (test scaffolding: the test awaits the task
/// before touching the value again).
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

struct Peers {
    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    let store = Box(MemoryFileStore())

    /// Real-time tests share two cores with the CPU-bound ones when `swift test --parallel` runs
    /// them all: generous timeouts, so that a starved task is not mistaken for a silent peer.
    var configuration = SessionConfiguration(link: LinkConfiguration(linkDeadAfter: .seconds(120)),
                                             handshakeTimeout: .seconds(120), idleTimeout: .seconds(120))

    func sender(_ files: [any FileSource]) -> SenderSession {
        SenderSession(identity: senderID, receiverKey: receiverID.publicKey, files: files, configuration: configuration)
    }

    func receiver() -> Box<ReceiverSession> {
        Box(ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "s", key: senderID.publicKey)]),
                            store: store.value, configuration: configuration))
    }
}

func receive(_ receiver: Box<ReceiverSession>, over transport: MemoryTransport,
             clock: some EndpointClock = MonotonicClock()) -> Task<EndpointRunner.Ending, any Error> {
    Task { try await EndpointRunner.runReceiver(&receiver.value, over: transport, clock: clock) { _ in } }
}

/// The real-time pump over an in-memory transport pair (its async port): the same code path the CLI
/// runs over BlueZ sockets.
@Test func aFileCrossesTheAsyncDriver() async throws {
    let peers = Peers()
    let data = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    var sender = peers.sender([MemoryFileSource(name: "doc", bytes: data)])
    let receiver = peers.receiver()
    let pair = MemoryTransportPair(maxDatagramSize: 182)
    let receiving = receive(receiver, over: pair.second)
    var senderEvents: [SenderSession.Event] = []
    let sent = try await EndpointRunner.runSender(&sender, over: pair.first) { senderEvents.append($0) }
    await pair.first.close()
    let received = try await receiving.value
    #expect(sent == .finished)
    #expect(received == .finished)
    #expect(peers.store.value.committed["doc"] == data)
    #expect(senderEvents.contains { if case .transfer(.fileSaved(0, "doc", 200_000, let hash, let air)) = $0 { hash.count == 32 && air >= 200_000 } else { false } })
}

@Test func aClosedTransportIsALostLinkAndTheSenderResumesOnTheNextOne() async throws {
    let peers = Peers()
    let data = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    var sender = peers.sender([MemoryFileSource(name: "big", bytes: data)])
    let receiver = peers.receiver()
    let clock = MonotonicClock()

    // First link: cut from outside once some data has been acknowledged.
    let first = MemoryTransportPair(maxDatagramSize: 244)
    let firstReceiver = receive(receiver, over: first.second, clock: clock)
    var cut = false
    let firstEnding = try await EndpointRunner.runSender(&sender, over: first.first) { event in
        if case .transfer(.progress(_, _, let acked)) = event, acked >= 60_000, !cut {
            cut = true
            Task { await first.first.close() }
        }
    }
    #expect(firstEnding == .linkLost)
    _ = try? await firstReceiver.value
    #expect(peers.store.value.committed.isEmpty)

    // Second link: resume where the receiver's data stopped.
    let second = MemoryTransportPair(maxDatagramSize: 244)
    let secondReceiver = receive(receiver, over: second.second, clock: clock)
    var resumedAt: UInt64 = 0
    let secondEnding = try await EndpointRunner.runSender(&sender, over: second.first) { event in
        if case .transfer(.fileStarted(_, _, _, let at)) = event { resumedAt = at }
    }
    await second.first.close()
    _ = try await secondReceiver.value
    #expect(secondEnding == .finished)
    #expect(resumedAt >= 60_000)
    #expect(peers.store.value.committed["big"] == data)
    #expect(peers.store.value.openTemporaries == 0)
}

/// Real monotonic time plus jumps: time passing between connections without waiting for it.
final class SkippingClock: EndpointClock {
    private let base = MonotonicClock()
    private let skipped = Mutex(Duration.zero)

    func skip(_ duration: Duration) { skipped.withLock { $0 += duration } }

    var now: Instant { base.now.advanced(by: skipped.withLock { $0 }) }
}

/// Sends `file` over a fresh in-memory link until `cutAt` bytes are acknowledged (then cuts the
/// link), or to the end. Returns the offset the receiver resumed it at.
@discardableResult
func connection(_ sender: inout SenderSession, _ receiver: Box<ReceiverSession>, clock: SkippingClock,
                cutAt: UInt64? = nil) async throws -> UInt64 {
    let pair = MemoryTransportPair(maxDatagramSize: 244)
    let receiving = receive(receiver, over: pair.second, clock: clock)
    var resumedAt: UInt64 = 0
    var cut = false
    _ = try await EndpointRunner.runSender(&sender, over: pair.first) { event in
        if case .transfer(.fileStarted(_, _, _, let at)) = event { resumedAt = at }
        if case .transfer(.progress(_, _, let acked)) = event, let cutAt, acked >= cutAt, !cut {
            cut = true
            Task { await pair.first.close() }
        }
    }
    await pair.first.close()
    _ = try? await receiving.value
    return resumedAt
}

/// The receiver keeps one clock for its whole life: a sender's four partials are its four most
/// recently active ones, and a partial nobody came back for expires (issue 9, defect 9: with a
/// fresh clock per connection, eviction was arbitrary and expiry never fired).
@Test func partialsAgeOnOneClockAcrossConnections() async throws {
    let peers = Peers()
    let receiver = peers.receiver()
    let clock = SkippingClock()
    let files = (0..<6).map { i in (0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* (i + 3)) } }
    var senders = files.enumerated().map { peers.sender([MemoryFileSource(name: "f\($0.offset)", bytes: $0.element)]) }
    for i in senders.indices {
        try await connection(&senders[i], receiver, clock: clock, cutAt: 40_000)
        clock.skip(.seconds(60))
    }
    #expect(receiver.value.partialTransfers == 4)
    // Newest first: each resumes where it stopped, finishes, and its partial goes.
    for i in senders.indices.reversed() {
        let resumedAt = try await connection(&senders[i], receiver, clock: clock)
        #expect((resumedAt > 0) == (i >= 2), "file \(i) resumed at \(resumedAt)")
        #expect(peers.store.value.committed["f\(i)"] == files[i])
    }

    // Abandoned, then 700 s without its sender: the next connection's end removes it.
    var late = peers.sender([MemoryFileSource(name: "late", bytes: files[0])])
    try await connection(&late, receiver, clock: clock, cutAt: 40_000)
    #expect(receiver.value.partialTransfers == 1)
    clock.skip(.seconds(700))
    var other = peers.sender([MemoryFileSource(name: "other", bytes: [1])])
    try await connection(&other, receiver, clock: clock)
    #expect(receiver.value.partialTransfers == 0)
    #expect(try await connection(&late, receiver, clock: clock) == 0, "expired: it starts afresh")
    #expect(peers.store.value.committed["late"] == files[0])
}
