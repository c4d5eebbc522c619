import Foundation
import Handshake
import Keys
import Pipeline
import Session
import Storage
import TestDoubles
import Testing
import Transfer

/// A receiver serving several connections at once: one `ReceiverSession` per connection, made by
/// `sharingState()`, all on one clock and one thread, sharing trust, the replay guard and the
/// transfer ledger.
private struct SharedReceiver {
    let receiverID = Identity.generate()
    let alice = Identity.generate()
    let bob = Identity.generate()
    let store: any FileStore
    let first: ReceiverSession

    init(store: any FileStore = MemoryFileStore(), trusting: Bool = true, asks: Bool = false, configuration: SessionConfiguration = .init()) {
        self.store = store
        let trust = TrustStore(peers: trusting ? [.init(name: "alice", key: alice.publicKey), .init(name: "bob", key: bob.publicKey)] : [])
        first = ReceiverSession(identity: receiverID, trust: trust, store: store, configuration: configuration, asksAboutStrangers: asks)
    }

    func sender(_ identity: Identity, _ files: [any FileSource]) -> SenderSession {
        SenderSession(identity: identity, receiverKey: receiverID.publicKey, files: files)
    }

    var memory: MemoryFileStore? { store as? MemoryFileStore }
}

/// Every connection's sender has heard an ack: each file is under way with bytes in it.
private func allReceiving(_ connections: [InterleavedConnection]) -> Bool {
    connections.allSatisfy { connection in
        connection.senderEvents.contains { if case .transfer(.progress) = $0 { true } else { false } }
    }
}

private func refusedAsReplay(_ events: [ReceiverSession.Event]) -> Bool {
    events.contains { if case .refused(.replayedHandshake(sender: "alice")) = $0 { true } else { false } }
}

private func authenticated(_ events: [ReceiverSession.Event], as name: String) -> Bool {
    events.contains { if case .authenticated(let sender, _) = $0 { sender == name } else { false } }
}

@Test func sessionsMadeBySharingStateShareIt() {
    let receiver = SharedReceiver()
    let other = receiver.first.sharingState()
    #expect(other.sharesState(with: receiver.first) && other.sharingState().sharesState(with: receiver.first))
    #expect(!other.isConnected && other.extensions == receiver.first.extensions)
    let alone = ReceiverSession(identity: receiver.receiverID, trust: TrustStore(peers: []), store: MemoryFileStore())
    #expect(!alone.sharesState(with: receiver.first))
}

/// Rule 1: two senders with different keys, interleaved datagram by datagram on one clock, both
/// deliver their files byte for byte.
@Test func twoSendersInterleavedDatagramByDatagramBothDeliver() throws {
    let receiver = SharedReceiver()
    let a = bytes(150_000, seed: 1), b = bytes(90_001, seed: 2), c = bytes(3_000, seed: 3)
    var connections = [
        try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "a.bin", bytes: a),
                                                                           MemoryFileSource(name: "c.bin", bytes: c)]),
                                  receiver: receiver.first, now: .zero),
        try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "b.bin", bytes: b)]),
                                  receiver: receiver.first.sharingState(), now: .zero),
    ]
    var overlapped = false
    interleave(&connections, from: .zero) { connections in
        // Both files in progress at one moment: the connections really ran at once.
        overlapped = overlapped || connections[0].receiver.partialTransfers == 2
        return false
    }
    #expect(overlapped)
    for connection in connections {
        let done = connection.isDone
        #expect(done, "\(String(describing: connection.senderError)) \(String(describing: connection.receiverError))")
        #expect(authenticated(connection.receiverEvents, as: connection.storedNames == ["b.bin"] ? "bob" : "alice"))
    }
    #expect(receiver.memory?.committed == ["a.bin": a, "b.bin": b, "c.bin": c])
    #expect(receiver.memory?.openTemporaries == 0 && receiver.first.partialTransfers == 0)
}

/// Rule 2: the same name from two senders at once: both are saved, neither overwritten; the
/// second to finish gets the store's usual next name (the CLI reports it as "exists: saved as").
@Test func theSameNameFromTwoSendersAtOnceIsSavedTwice() throws {
    let receiver = SharedReceiver()
    let fromAlice = bytes(60_000, seed: 4), fromBob = bytes(40_000, seed: 5)
    var connections = [
        try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "report.pdf", bytes: fromAlice)]),
                                  receiver: receiver.first, now: .zero),
        try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "report.pdf", bytes: fromBob)]),
                                  receiver: receiver.first.sharingState(), now: .zero),
    ]
    interleave(&connections, from: .zero)
    let committed = receiver.memory?.committed ?? [:]
    #expect(Set(committed.keys) == ["report.pdf", "report.pdf.1"])
    // Each sender was told where its own bytes went.
    #expect(connections[0].storedNames.count == 1 && connections[1].storedNames.count == 1)
    #expect(committed[connections[0].storedNames.first ?? ""] == fromAlice)
    #expect(committed[connections[1].storedNames.first ?? ""] == fromBob)
}

/// Rule 2 on a real folder: the `DirectoryFileStore` numbers the second `report-1.pdf`.
@Test func theSameNameFromTwoSendersAtOnceIsSavedTwiceOnDisk() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blesend-shared-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let receiver = SharedReceiver(store: try DirectoryFileStore(directory: directory, modes: FileModes(umask: 0o022), temporaryTag: "test"))
    let fromAlice = bytes(50_000, seed: 6), fromBob = bytes(70_000, seed: 7)
    var connections = [
        try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "report.pdf", bytes: fromAlice)]),
                                  receiver: receiver.first, now: .zero),
        try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "report.pdf", bytes: fromBob)]),
                                  receiver: receiver.first.sharingState(), now: .zero),
    ]
    interleave(&connections, from: .zero)
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    #expect(names == ["report-1.pdf", "report.pdf"], "no temporaries left either")
    let aliceName = try #require(connections[0].storedNames.first), bobName = try #require(connections[1].storedNames.first)
    #expect(Set([aliceName, bobName]) == ["report.pdf", "report-1.pdf"])
    #expect(FileManager.default.contents(atPath: directory + "/" + aliceName) == Data(fromAlice))
    #expect(FileManager.default.contents(atPath: directory + "/" + bobName) == Data(fromBob))
    // The receiver's event carries both names, from which the CLI says "exists: saved as".
    let renamed = connections.flatMap(\.receiverEvents).compactMap { event -> String? in
        if case .transfer(.fileSaved(_, "report.pdf", let stored, _, _)) = event, stored != "report.pdf" { return stored }
        return nil
    }
    #expect(renamed == ["report-1.pdf"])
}

/// Rule 3: the replay guard is shared: message 1 accepted on one session is refused as a replay
/// on another session of the same state (and, for contrast, accepted by an unrelated receiver).
@Test func aMessage1AcceptedOnOneSessionIsAReplayOnAnother() throws {
    let receiver = SharedReceiver()
    var first = try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "one", bytes: [1, 2, 3])]),
                                          receiver: receiver.first, now: .zero)
    // Message 1: what the sender sends before it hears anything.
    let message1 = try first.withhold(upTo: 64, now: .zero)
    #expect(!message1.isEmpty)
    for datagram in message1 { try first.receiver.receive(datagram: datagram, now: .zero) }
    var connections = [first]
    interleave(&connections, from: .zero)
    #expect(connections[0].isDone && receiver.memory?.committed["one"] == [1, 2, 3])
    let later = Instant.zero.advanced(by: .seconds(5))

    var other = receiver.first.sharingState()
    try other.accept(maxDatagramSize: InterleavedConnection.datagramSize, now: later, wallClock: InterleavedConnection.wallClock(later))
    for datagram in message1 { try other.receive(datagram: datagram, now: later) }
    let events = other.takeEvents()
    #expect(refusedAsReplay(events), "\(events)")
    #expect(!authenticated(events, as: "alice"))

    var unrelated = ReceiverSession(identity: receiver.receiverID, trust: TrustStore(peers: [.init(name: "alice", key: receiver.alice.publicKey)]),
                                    store: MemoryFileStore())
    try unrelated.accept(maxDatagramSize: InterleavedConnection.datagramSize, now: later, wallClock: InterleavedConnection.wallClock(later))
    for datagram in message1 { try unrelated.receive(datagram: datagram, now: later) }
    let contrast = unrelated.takeEvents()
    #expect(authenticated(contrast, as: "alice") && !refusedAsReplay(contrast))
}

/// Rule 4, first contact: a stranger approved on one session is trusted on the next handshake of
/// another session of the same state, one made before the approval.
@Test func aSenderApprovedOnOneSessionIsTrustedOnAnother() throws {
    let receiver = SharedReceiver(trusting: false, asks: true)
    let other = receiver.first.sharingState()
    var asking = [try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "hi", bytes: [1])]),
                                            receiver: receiver.first, now: .zero)]
    let asked = interleave(&asking, from: .zero) { connections in connections[0].receiver.isAwaitingApproval }
    #expect(asking[0].receiverEvents.contains { if case .approvalNeeded = $0 { true } else { false } })
    #expect(try asking[0].receiver.approve(name: "alice", now: asked))
    interleave(&asking, from: asked)
    #expect(asking[0].isDone && receiver.memory?.committed["hi"] == [1])

    let later = asked.advanced(by: .seconds(1))
    var again = [try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "again", bytes: [2])]),
                                           receiver: other, now: later)]
    interleave(&again, from: later)
    #expect(authenticated(again[0].receiverEvents, as: "alice"))
    #expect(!again[0].receiverEvents.contains { if case .approvalNeeded = $0 { true } else { false } })
    #expect(again[0].isDone && receiver.memory?.committed["again"] == [2])
}

/// Rule 4, `trust(_:)`: a key the driver trusts through one session is trusted on the next
/// handshake of another, which refused it before.
@Test func aSenderTrustedThroughOneSessionIsTrustedOnAnother() throws {
    let receiver = SharedReceiver(trusting: false)
    var first = receiver.first
    var refused = [try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "x", bytes: [1])]),
                                             receiver: first.sharingState(), now: .zero)]
    let at = interleave(&refused, from: .zero) { connections in connections[0].receiver.connectionComplete }
    #expect(refused[0].receiverEvents.contains { if case .refused(.unknownSender) = $0 { true } else { false } })
    refused[0].end(now: at)

    first.trust(.init(name: "bob", key: receiver.bob.publicKey))
    let later = at.advanced(by: .seconds(1))
    var trusted = [try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "x", bytes: [1])]),
                                             receiver: refused[0].receiver, now: later)]
    interleave(&trusted, from: later)
    #expect(authenticated(trusted[0].receiverEvents, as: "bob"))
    #expect(trusted[0].isDone && receiver.memory?.committed["x"] == [1])
}

/// The trust directory read again (`replaceTrust`, issue 23): a key removed while a transfer of
/// its sender runs leaves that connection going (it authenticated before), and is refused at its
/// next handshake, on any session of the state; a key added is trusted at the next one.
@Test func aKeyRemovedFromTheTrustStoreIsRefusedAtTheNextHandshake() throws {
    let receiver = SharedReceiver()
    var first = receiver.first
    let data = bytes(60_000, seed: 12)
    var running = [try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "a", bytes: data)]),
                                             receiver: first.sharingState(), now: .zero)]
    let during = interleave(&running, from: .zero) { allReceiving($0) }
    first.replaceTrust(TrustStore(peers: [.init(name: "bob", key: receiver.bob.publicKey)]))
    let done = interleave(&running, from: during)
    #expect(running[0].isDone && receiver.memory?.committed["a"] == data, "the transfer under way goes on")

    let later = done.advanced(by: .seconds(1))
    var again = [try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "b", bytes: [1])]),
                                           receiver: first.sharingState(), now: later)]
    let refusedAt = interleave(&again, from: later) { connections in connections[0].receiver.connectionComplete }
    #expect(again[0].receiverEvents.contains { if case .refused(.unknownSender) = $0 { true } else { false } })
    #expect(receiver.memory?.committed["b"] == nil)

    first.replaceTrust(TrustStore(peers: [.init(name: "alice-again", key: receiver.alice.publicKey)]))
    let after = refusedAt.advanced(by: .seconds(1))
    var back = [try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "c", bytes: [2])]),
                                          receiver: receiver.first.sharingState(), now: after)]
    interleave(&back, from: after)
    #expect(authenticated(back[0].receiverEvents, as: "alice-again"))
    #expect(back[0].isDone && receiver.memory?.committed["c"] == [2])
}

/// A replay memory whose disk fails every write.
private final class UnwritableReplayMemory: ReplayMemory {
    var recalled: [ReplayMemoryEntry] { [] }
    func remember(key: [UInt8], timestamp: UInt64) throws(StorageError) {
        throw StorageError(.noSpace, "cannot sync /var/lib/blesend/replay: No space left on device")
    }
}

/// Issue 23: a receiver that cannot make message 1's timestamp durable refuses the sender (else a
/// recording of it would be answered after a restart) and says why; nothing is stored.
@Test func aReceiverThatCannotKeepItsReplayGuardRefusesAndSaysWhy() throws {
    let receiverID = Identity.generate(), alice = Identity.generate()
    let receiver = ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "alice", key: alice.publicKey)]),
                                   store: MemoryFileStore(), replayMemory: UnwritableReplayMemory())
    var connections = [try InterleavedConnection(
        sender: SenderSession(identity: alice, receiverKey: receiverID.publicKey, files: [MemoryFileSource(name: "x", bytes: [1])]),
        receiver: receiver, now: .zero)]
    interleave(&connections, from: .zero) { connections in connections[0].receiver.connectionComplete }
    let failure = StorageError(.noSpace, "cannot sync /var/lib/blesend/replay: No space left on device")
    #expect(connections[0].receiverEvents.contains(.refused(.replayGuardNotSaved(sender: "alice", failure: failure))))
    #expect(connections[0].senderError == .refusedByPeer)
    #expect(!authenticated(connections[0].receiverEvents, as: "alice"))
}

/// Rule 5: connection A's partial is older than the partial lifetime by the clock (A stalled),
/// but A is still connected; connection B ends, and its lost link runs the expiry. A's partial
/// stays (a parked one of a third connection does expire), and A's file completes.
@Test func expiryInAnotherConnectionsLostLinkSparesALiveConnectionsPartial() throws {
    let receiver = SharedReceiver(configuration: SessionConfiguration(partialLifetime: .seconds(2)))
    let a = bytes(200_000, seed: 8), b = bytes(20_000, seed: 9), c = bytes(200_000, seed: 10)
    var connections = [
        try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "a", bytes: a)]),
                                  receiver: receiver.first, now: .zero),
        try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "c", bytes: c)]),
                                  receiver: receiver.first.sharingState(), now: .zero),
    ]
    // Both files under way; then C's link goes (its partial waits from now).
    var now = interleave(&connections, from: .zero, until: allReceiving)
    connections[1].end(now: now)
    #expect(receiver.first.partialTransfers == 2)

    // A stalls (its pump turn does not come) for 5 s, longer than the 2 s lifetime, while B runs
    // a whole connection and ends.
    now = now.advanced(by: .seconds(5))
    var others = [try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "b", bytes: b)]),
                                            receiver: receiver.first.sharingState(), now: now)]
    now = interleave(&others, from: now)
    #expect(others[0].isDone)
    others[0].end(now: now)
    #expect(receiver.first.partialTransfers == 1, "C's expired; A's, idle for 5 s but connected, stayed")

    // A goes on and completes.
    var alone = [connections[0]]
    interleave(&alone, from: now)
    let done = alone[0].isDone
    #expect(done, "\(String(describing: alone[0].receiverError))")
    #expect(receiver.memory?.committed["a"] == a && receiver.memory?.committed["b"] == b)
    #expect(receiver.memory?.committed["c"] == nil && receiver.memory?.openTemporaries == 0)
}

/// Rule 6: the same sender key on two sessions at once: the sender's link dropped, it reconnects
/// to a second session while the first has not noticed yet. The newer session takes the partial
/// over (resuming past zero); what was still in flight on the older link is ignored there; the
/// older's lost link leaves the newer's file alone, and the file arrives once and intact.
@Test func theSameSenderOnTwoSessionsAtOnceResumesOnTheNewer() throws {
    let receiver = SharedReceiver()
    let data = bytes(300_000, seed: 11)
    var sender = receiver.sender(receiver.alice, [MemoryFileSource(name: "big", bytes: data)])
    var older = [try InterleavedConnection(sender: sender, receiver: receiver.first, now: .zero)]
    var now = interleave(&older, from: .zero) { connections in
        connections[0].senderEvents.contains { if case .transfer(.progress) = $0 { true } else { false } }
    }
    // Enough datagrams for whole records (one of a file's records spans about 17 at this size).
    let inFlight = try older[0].withhold(upTo: 64, now: now)
    #expect(inFlight.count >= 40, "\(inFlight.count) in flight")
    sender = older[0].sender
    sender.linkLost()

    now = now.advanced(by: .milliseconds(10))
    var newer = [try InterleavedConnection(sender: sender, receiver: receiver.first.sharingState(), now: now)]
    now = interleave(&newer, from: now) { connections in connections[0].startOffsets.count == 1 }
    #expect(newer[0].startOffsets.first.map { $0 > 0 } == true, "resumed: \(newer[0].startOffsets)")
    // The older session gets what was in flight, then hears its link went.
    var stale = older[0].receiver
    for datagram in inFlight { try stale.receive(datagram: datagram, now: now) }
    stale.linkLost(now: now)
    #expect(stale.partialTransfers == 1, "the newer connection's partial stays")

    interleave(&newer, from: now)
    let done = newer[0].isDone
    #expect(done, "\(String(describing: newer[0].receiverError))")
    #expect(receiver.memory?.committed == ["big": data])
    #expect(receiver.memory?.openTemporaries == 0 && receiver.first.partialTransfers == 0)
    #expect(!stale.takeEvents().contains { if case .transfer(.fileSaved) = $0 { true } else { false } })
}

/// `linkLost` on one session leaves another connection's partial alone; `shutdown` on any one
/// discards every connection's.
@Test func linkLostIsPerConnectionAndShutdownIsForAll() throws {
    let receiver = SharedReceiver()
    var connections = [
        try InterleavedConnection(sender: receiver.sender(receiver.alice, [MemoryFileSource(name: "a", bytes: bytes(100_000, seed: 12))]),
                                  receiver: receiver.first, now: .zero),
        try InterleavedConnection(sender: receiver.sender(receiver.bob, [MemoryFileSource(name: "b", bytes: bytes(100_000, seed: 13))]),
                                  receiver: receiver.first.sharingState(), now: .zero),
    ]
    let now = interleave(&connections, from: .zero, until: allReceiving)
    connections[1].end(now: now.advanced(by: .seconds(3_600)))
    #expect(receiver.first.partialTransfers == 2, "B's waits for a resume; A's is A's")
    connections[1].receiver.shutdown()
    #expect(receiver.first.partialTransfers == 0 && receiver.memory?.openTemporaries == 0)
}
