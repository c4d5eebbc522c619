import Keys
import MemoryTransport
import Pipeline
import Session
import SessionRunner
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

    func sender(_ files: [any FileSource]) -> SenderSession {
        SenderSession(identity: senderID, receiverKey: receiverID.publicKey, files: files)
    }

    func receiver() -> Box<ReceiverSession> {
        Box(ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "s", key: senderID.publicKey)]), store: store.value))
    }
}

func receive(_ receiver: Box<ReceiverSession>, over transport: MemoryTransport,
             clock: some EndpointClock = MonotonicClock()) -> Task<EndpointRunner.Ending, any Error> {
    Task { try await EndpointRunner.runReceiver(&receiver.value, over: transport, clock: clock) { _ in } }
}

/// The async driver over a real-time in-memory transport pair: the same code path the CLI
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
    #expect(senderEvents.contains(.transfer(.fileSaved(index: 0, storedName: "doc", size: 200_000))))
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
