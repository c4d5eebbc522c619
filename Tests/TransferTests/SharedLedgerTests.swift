import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// Several connections served at once over one `ReceiverLedger`: what one connection does to the
/// shared tables (expiry, eviction, a lost link, abandonment, a resume) leaves what another live
/// connection is using alone.

private func seconds(_ s: Int64) -> Instant { Instant(nanoseconds: UInt64(s) * 1_000_000_000) }
private func id(_ n: UInt8) -> TransferID { TransferID(bytes: Array(repeating: n, count: 16))! }
private func hash(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = TestHasher()
    hasher.update(bytes)
    return hasher.finalize()
}
private func offer(_ n: UInt8, size: UInt64, name: String) -> TransferMessage { .offer(.init(id: id(n), size: size, name: name)) }

private func ledger(_ store: MemoryFileStore, lifetime: Duration = .seconds(10), perSender: Int = 4) -> ReceiverLedger {
    ReceiverLedger(store: store, makeHasher: { TestHasher() }, partialLifetime: lifetime, maxPartialsPerSender: perSender, trees: store)
}

@Test func receiversOverOneLedgerShareItsTables() throws {
    let store = MemoryFileStore()
    let shared = ledger(store)
    var a = TransferReceiver(ledger: shared)
    let b = TransferReceiver(ledger: shared)
    #expect(a.ledger === b.ledger && b.grantable.contains(.folders))
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 10, name: "f")], now: .zero)
    _ = try a.receive(.data([1, 2, 3]), now: .zero)
    #expect(a.partialCount == 1 && b.partialCount == 1 && shared.partialCount == 1)
}

/// Rule 5: expiry runs in another connection's `linkLost`; a partial a live connection is
/// receiving stays, however long ago its last byte came, and its file completes.
@Test func expiryOnAnotherConnectionSparesALiveConnectionsPartial() throws {
    let store = MemoryFileStore()
    let shared = ledger(store, lifetime: .seconds(10))
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared), parked = TransferReceiver(ledger: shared)
    let bytes = pattern(1_000)
    // Connection A: its file stalls at 300 bytes for 100 s (longer than the lifetime).
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 1_000, name: "a")], now: .zero)
    _ = try a.receive(.data(Array(bytes[..<300])), now: .zero)
    // A partial whose link dropped long ago: this one does expire.
    _ = try parked.begin(sender: "carol", senderKey: [3], opening: [offer(3, size: 10, name: "c")], now: .zero)
    _ = try parked.receive(.data([1]), now: .zero)
    parked.connectionLost(now: .zero)
    // Connection B, from another sender, ends at 100 s: its lost link runs the expiry.
    _ = try b.begin(sender: "bob", senderKey: [2], opening: [offer(2, size: 10, name: "b")], now: seconds(90))
    _ = try b.receive(.data([9, 9]), now: seconds(90))
    b.connectionLost(now: seconds(100))
    b.expirePartials(now: seconds(100))
    #expect(shared.partialCount == 2, "A's (held) and B's (just lost) stay; C's went")
    #expect(store.openTemporaries == 2)
    // A goes on and completes.
    _ = try a.receive(.data(Array(bytes[300...])), now: seconds(100))
    #expect(try a.receive(.done(id: id(1), hash: hash(bytes)), now: seconds(100)) == [.confirm(id: id(1), status: .saved, storedName: "a")])
    #expect(store.committed["a"] == bytes)
}

/// Rule 5 for folders: a folder that a live connection is filling outlives another's expiry.
@Test func expiryOnAnotherConnectionSparesALiveConnectionsFolder() throws {
    let store = MemoryFileStore()
    let shared = ledger(store, lifetime: .seconds(10))
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared)
    let tree = id(0x70)
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [.hello(.folders), .folder(id: id(0x71), tree: tree, path: Array("t".utf8))],
                    now: .zero)
    _ = try a.receive(.entry(.init(id: id(0x72), tree: tree, size: 4, executable: false, path: Array("t/f".utf8))), now: .zero)
    _ = try a.receive(.data([1, 2]), now: .zero)
    _ = try b.begin(sender: "bob", senderKey: [2], opening: [offer(2, size: 10, name: "b")], now: seconds(100))
    b.connectionLost(now: seconds(100))
    b.expirePartials(now: seconds(100))
    #expect(shared.openTreeCount == 1 && shared.partialCount == 1)
    _ = try a.receive(.data([3, 4]), now: seconds(100))
    _ = try a.receive(.done(id: id(0x72), hash: hash([1, 2, 3, 4])), now: seconds(100))
    #expect(try a.receive(.commit(tree: tree), now: seconds(100)) == [.confirm(id: tree, status: .saved, storedName: "t")])
    #expect(store.committed["t/f"] == [1, 2, 3, 4] && store.openTrees == 0)
    // Once A's link goes, its folders wait and expire like any other.
    a.connectionLost(now: seconds(100))
    a.expirePartials(now: seconds(200))
    #expect(shared.openTreeCount == 0 && shared.partialCount == 0)
}

/// A lost link releases that connection's partial only: another connection's file that has not
/// received a byte yet (which its own lost link would remove at once) stays.
@Test func aLostLinkLeavesAnotherConnectionsFileAlone() throws {
    let store = MemoryFileStore()
    let shared = ledger(store)
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared)
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 3, name: "a")], now: .zero)
    _ = try b.begin(sender: "bob", senderKey: [2], opening: [offer(2, size: 3, name: "b")], now: .zero)
    b.connectionLost(now: .zero)
    #expect(shared.partialCount == 1, "B's empty file went, A's stayed")
    _ = try a.receive(.data([1, 2, 3]), now: .zero)
    #expect(try a.receive(.done(id: id(1), hash: hash([1, 2, 3])), now: .zero) == [.confirm(id: id(1), status: .saved, storedName: "a")])
}

/// Rule 6: the same sender key on two connections at once (the older one's link died unnoticed).
/// The newer resumes the partial and takes it over; the older's later data for it is ignored, so
/// one writer at a time, and the file arrives intact; the older's lost link leaves it alone.
@Test func aResumeOnANewerConnectionTakesThePartialOverFromTheOlder() throws {
    let store = MemoryFileStore()
    let shared = ledger(store)
    var older = TransferReceiver(ledger: shared), newer = TransferReceiver(ledger: shared)
    let bytes = pattern(100)
    _ = try older.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 100, name: "f")], now: .zero)
    _ = try older.receive(.data(Array(bytes[..<40])), now: .zero)
    #expect(try newer.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 100, name: "f")], now: .zero)
            == [.accept(id: id(1), offset: 40)])
    // Still in flight on the older link: ignored, not written.
    #expect(try older.receive(.data(Array(bytes[40..<60])), now: .zero) == [])
    #expect(try older.receive(.done(id: id(1), hash: hash(bytes)), now: .zero) == [], "no confirm from the older")
    older.connectionLost(now: .zero)
    older.expirePartials(now: seconds(1_000))
    #expect(shared.partialCount == 1)
    _ = try newer.receive(.data(Array(bytes[40...])), now: .zero)
    #expect(try newer.receive(.done(id: id(1), hash: hash(bytes)), now: .zero) == [.confirm(id: id(1), status: .saved, storedName: "f")])
    #expect(store.committed["f"] == bytes && store.openTemporaries == 0)
    #expect(older.takeEvents().compactMap(\.savedName).isEmpty && newer.takeEvents().compactMap(\.savedName) == ["f"])
}

/// Eviction beyond `maxPartialsPerSender` takes only what no other live connection holds.
@Test func evictionPassesByAPartialAnotherConnectionHolds() throws {
    let store = MemoryFileStore()
    let shared = ledger(store, perSender: 1)
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared)
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 4, name: "a")], now: .zero)
    _ = try a.receive(.data([1, 2]), now: .zero)
    _ = try b.begin(sender: "alice", senderKey: [1], opening: [offer(2, size: 4, name: "b")], now: seconds(1))
    #expect(shared.partialCount == 2)
    _ = try a.receive(.data([3, 4]), now: seconds(1))
    #expect(try a.receive(.done(id: id(1), hash: hash([1, 2, 3, 4])), now: seconds(1)) == [.confirm(id: id(1), status: .saved, storedName: "a")])
    // With nobody holding it, a waiting partial of the same sender is evicted as before.
    _ = try b.receive(.data([9]), now: seconds(1))
    b.connectionLost(now: seconds(1))
    _ = try b.begin(sender: "alice", senderKey: [1], opening: [offer(3, size: 4, name: "c")], now: seconds(2))
    _ = try b.receive(.data([5]), now: seconds(2))
    b.connectionLost(now: seconds(2))
    #expect(shared.partialCount == 1 && store.openTemporaries == 1)
}

/// A connection abandoned for tampering loses its own folders, not those another live
/// connection of the same key is filling.
@Test func abandoningOneConnectionSparesAnothersFolders() throws {
    let store = MemoryFileStore()
    let shared = ledger(store)
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared)
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [.hello(.folders), .folder(id: id(1), tree: id(0x10), path: Array("x".utf8))],
                    now: .zero)
    _ = try b.begin(sender: "alice", senderKey: [1], opening: [.hello(.folders), .folder(id: id(2), tree: id(0x20), path: Array("y".utf8))],
                    now: .zero)
    b.abandonCurrent(because: .tampered)
    #expect(b.takeEvents() == [.fileFailed(sender: "alice", name: "y", .tampered)])
    #expect(shared.openTreeCount == 1)
    #expect(try a.receive(.commit(tree: id(0x10)), now: .zero) == [.confirm(id: id(0x10), status: .saved, storedName: "x")])
}

/// Shutdown on any one receiver discards every connection's partials; the others ignore the
/// rest of such a file rather than fail.
@Test func discardAllReachesEveryConnection() throws {
    let store = MemoryFileStore()
    let shared = ledger(store)
    var a = TransferReceiver(ledger: shared), b = TransferReceiver(ledger: shared)
    _ = try a.begin(sender: "alice", senderKey: [1], opening: [offer(1, size: 4, name: "a")], now: .zero)
    _ = try a.receive(.data([1]), now: .zero)
    b.discardAll()
    #expect(shared.partialCount == 0 && store.openTemporaries == 0)
    #expect(try a.receive(.data([2, 3, 4]), now: .zero) == [])
    #expect(try a.receive(.done(id: id(1), hash: hash([1, 2, 3, 4])), now: .zero) == [])
    #expect(store.committed.isEmpty)
}

private extension TransferReceiver.Event {
    var savedName: String? {
        if case .fileSaved(_, _, let stored, _, _) = self { return stored }
        return nil
    }
}
