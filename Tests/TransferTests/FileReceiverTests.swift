import Pipeline
import TestDoubles
import Testing
@testable import Transfer

private let alice = AuthenticatedSender(name: "alice", key: [1, 2, 3])

private func fileReceiver(_ store: MemoryFileStore = MemoryFileStore(), maxFileSize: UInt64 = 1 << 20) -> FileReceiver {
    FileReceiver(ledger: ReceiverLedger(store: store, makeHasher: { TestHasher() }, maxFileSize: maxFileSize),
                 chunks: ChunkDecoder(decompressor: nil))
}

private func hash(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = TestHasher()
    hasher.update(bytes)
    return hasher.finalize()
}

/// Offers `name` (`size` bytes) as a new file: `recall` has nothing, `start` accepts it.
private func offer(_ files: inout FileReceiver, _ name: String, size: UInt64?, events: inout [TransferReceiver.Event]) -> TransferMessage {
    let key = alice.key(for: sampleID)
    #expect(files.recall(key, size: size, now: .zero, from: alice, events: &events) == nil)
    return files.start(key, size: size, at: .store(name: name), now: .zero, from: alice, events: &events)
}

@Test func aFileGoesFromOfferToCommit() throws {
    let store = MemoryFileStore()
    var files = fileReceiver(store)
    var events: [TransferReceiver.Event] = []
    let bytes = pattern(40_000)
    #expect(offer(&files, "a.bin", size: 40_000, events: &events) == .accept(id: sampleID, offset: 0))
    #expect(files.isReceiving)
    let replies = try files.receive(.raw(bytes), compressing: false, now: .zero, from: alice, events: &events)
    #expect(replies == [.ack(id: sampleID, received: 40_000)])
    #expect(try files.done(sampleID, hash: hash(bytes), from: alice, events: &events)
            == [.confirm(id: sampleID, status: .saved, storedName: "a.bin")])
    #expect(store.committed["a.bin"] == bytes)
    #expect(events == [
        .fileStarted(sender: "alice", name: "a.bin", size: 40_000, resumedAt: 0),
        .progress(name: "a.bin", received: 40_000, size: 40_000),
        .fileSaved(sender: "alice", name: "a.bin", storedName: "a.bin", size: 40_000, hash: hash(bytes)),
    ])
    // Offered again (its confirm was lost): answered from memory, then confirmed again.
    events = []
    let key = alice.key(for: sampleID)
    #expect(files.recall(key, size: 40_000, now: .zero, from: alice, events: &events) == .accept(id: sampleID, offset: 40_000))
    #expect(try files.done(sampleID, hash: [], from: alice, events: &events) == [.confirm(id: sampleID, status: .saved, storedName: "a.bin")])
    #expect(events.isEmpty && files.partialCount == 0)
}

@Test func aFileWhoseLinkDroppedResumesWhereTheDataStopped() throws {
    var files = fileReceiver()
    var events: [TransferReceiver.Event] = []
    _ = offer(&files, "r.bin", size: 10, events: &events)
    _ = try files.receive(.raw([1, 2, 3, 4]), compressing: false, now: .zero, from: alice, events: &events)
    files.connectionLost(now: .zero)
    #expect(!files.isReceiving && files.partialCount == 1)
    events = []
    let key = alice.key(for: sampleID)
    #expect(files.recall(key, size: 10, now: .zero, from: alice, events: &events) == .accept(id: sampleID, offset: 4))
    #expect(events == [.fileStarted(sender: "alice", name: "r.bin", size: 10, resumedAt: 4)])
    // Another size under the same id is another file: the partial goes.
    files.connectionLost(now: .zero)
    #expect(files.recall(key, size: 11, now: .zero, from: alice, events: &events) == nil)
    #expect(files.partialCount == 0)
}

@Test func dataBeyondTheOfferAndADoneOutOfPlaceStopTheSession() throws {
    let store = MemoryFileStore()
    var files = fileReceiver(store)
    var events: [TransferReceiver.Event] = []
    #expect(throws: TransferError.unexpected(.data)) { try files.receive(.raw([1]), compressing: false, now: .zero, from: alice, events: &events) }
    #expect(throws: TransferError.unexpected(.done)) { try files.done(sampleID, hash: [], from: alice, events: &events) }
    _ = offer(&files, "a.bin", size: 2, events: &events)
    #expect(throws: TransferError.moreBytesThanOffered) {
        try files.receive(.raw([1, 2, 3]), compressing: false, now: .zero, from: alice, events: &events)
    }
    #expect(events.last == .fileFailed(sender: "alice", name: "a.bin", .senderBrokeProtocol(.moreBytesThanOffered)))
    #expect(store.openTemporaries == 0)
}

@Test func aRefusedFileHasItsDataIgnoredUntilItsDone() throws {
    var files = fileReceiver(maxFileSize: 100)
    var events: [TransferReceiver.Event] = []
    #expect(offer(&files, "big", size: 101, events: &events) == .reject(id: sampleID, reason: .tooLarge))
    #expect(try files.receive(.raw([1]), compressing: false, now: .zero, from: alice, events: &events).isEmpty)
    #expect(try files.done(sampleID, hash: [], from: alice, events: &events).isEmpty)
    #expect(events == [.fileFailed(sender: "alice", name: "big", .rejected(.tooLarge))])
    #expect(files.refuse(sampleID, name: "?", .badName, from: alice, events: &events) == .reject(id: sampleID, reason: .badName))
}

@Test func aFileTheStoreCannotTakeFailsWithTheStoresOwnError() throws {
    let store = MemoryFileStore()
    store.capacity = 10
    var files = fileReceiver(store)
    var events: [TransferReceiver.Event] = []
    // Too large for the disk up front: refused as too large, reported with the store's code.
    #expect(offer(&files, "big", size: 11, events: &events) == .reject(id: sampleID, reason: .tooLarge))
    guard case .fileFailed(_, _, .couldNotStore(let error)) = events.last else { Issue.record("\(events)"); return }
    #expect(error.code == .noSpace && error.detail.contains("not enough space"))
    // A stream that fills the disk: refused as not storable, with the write's error.
    events = []
    _ = offer(&files, "stream", size: nil, events: &events)
    #expect(try files.receive(.raw(pattern(11)), compressing: false, now: .zero, from: alice, events: &events)
            == [.reject(id: sampleID, reason: .couldNotStore)])
    #expect(events.last == .fileFailed(sender: "alice", name: "stream", .couldNotStore(StorageError(.noSpace, "any text"))))
    #expect(store.openTemporaries == 0)
}

/// Issue 32: kept partials had no bound across senders but the disk. Now what waits for a resume
/// gives way to a transfer that is running: a new file (at its offer, or while it grows) that
/// finds no space removes the least recently active partial no connection holds, and goes on.
@Test func keptPartialsGiveWayToARunningTransfer() throws {
    let store = MemoryFileStore()
    store.capacity = 100
    let ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() })
    let bob = AuthenticatedSender(name: "bob", key: [9])
    var events: [TransferReceiver.Event] = []
    // Bob leaves two partials, 40 and 30 bytes, the first older.
    for (n, count) in [(1, 40), (2, 30)] {
        var files = FileReceiver(ledger: ledger, chunks: ChunkDecoder(decompressor: nil))
        let key = bob.key(for: TransferID(halves: (UInt64(n), 0)))
        let at = Instant.zero.advanced(by: .seconds(n))
        #expect(files.start(key, size: 50, at: .store(name: "b\(n)"), now: at, from: bob, events: &events) == .accept(id: key.id, offset: 0))
        _ = try files.receive(.raw(pattern(count)), compressing: false, now: at, from: bob, events: &events)
        files.connectionLost(now: at)
    }
    #expect(ledger.partialCount == 2)
    // Alice offers 50 bytes with 30 free: Bob's older partial goes, and her file is taken.
    var alices = FileReceiver(ledger: ledger, chunks: ChunkDecoder(decompressor: nil))
    let later = Instant.zero.advanced(by: .seconds(10))
    let file = pattern(50)
    #expect(alices.start(alice.key(for: sampleID), size: 50, at: .store(name: "a.bin"), now: later, from: alice, events: &events)
            == .accept(id: sampleID, offset: 0))
    #expect(ledger.partials[bob.key(for: TransferID(halves: (1, 0)))] == nil && ledger.partialCount == 2)
    #expect(Array(events.suffix(2)) == [.keptRemovedForRoom(name: "b1"), .fileStarted(sender: "alice", name: "a.bin", size: 50, resumedAt: 0)],
            "and it is said, before her file starts")
    _ = try alices.receive(.raw(file), compressing: false, now: later, from: alice, events: &events)
    #expect(try alices.done(sampleID, hash: hash(file), from: alice, events: &events).first == .confirm(id: sampleID, status: .saved, storedName: "a.bin"))
    // Then a stream, 20 free: while it grows, Bob's other partial goes too.
    let stream = TransferID(halves: (77, 0))
    #expect(alices.start(alice.key(for: stream), size: nil, at: .store(name: "s"), now: later, from: alice, events: &events)
            == .accept(id: stream, offset: 0))
    #expect(try alices.receive(.raw(pattern(31)), compressing: false, now: later, from: alice, events: &events).isEmpty)
    #expect(ledger.partialCount == 1, "only the stream")
    #expect(events.filter { if case .keptRemovedForRoom = $0 { true } else { false } } == [.keptRemovedForRoom(name: "b1"), .keptRemovedForRoom(name: "b2")])
    // Past what removing every waiting partial gives, it fails as before.
    #expect(try alices.receive(.raw(pattern(20)), compressing: false, now: later, from: alice, events: &events)
            == [.reject(id: stream, reason: .couldNotStore)])
    #expect(ledger.partialCount == 0 && store.openTemporaries == 0 && store.committed["a.bin"] == file)
}

/// Folders give way the same way, after partial files: the least recently active that no
/// connection holds, never one a connection holds.
@Test func onlyAFolderNoConnectionHoldsGivesWay() throws {
    let store = MemoryFileStore()
    var folders = OpenFolders(lifetime: .seconds(3_600), maxPerSender: 4)
    for n in 0..<3 {
        let origin = TreeOrigin(senderKey: [UInt8(n)], tree: TransferID(halves: (UInt64(n), 0)), folder: TransferID(halves: (UInt64(n), 1)),
                                top: Array("t\(n)".utf8))
        folders[PartialTransfers.Key(senderKey: [UInt8(n)], id: origin.tree)] =
            OpenFolders.Folder(tree: try store.beginTree(named: "t\(n)", origin: origin), top: origin.top, name: "t\(n)",
                               lastActivity: .at(Instant(nanoseconds: UInt64(n))), holders: n == 0 ? [LedgerHolder(number: 1)] : [])
    }
    #expect(folders.discardLeastRecentlyActiveWaiting() != nil && folders[PartialTransfers.Key(senderKey: [1], id: TransferID(halves: (1, 0)))] == nil)
    #expect(folders.discardLeastRecentlyActiveWaiting() != nil && folders.count == 1)
    #expect(folders.discardLeastRecentlyActiveWaiting() == nil && folders.count == 1, "the held one stays")
}

/// A store that throws something other than a `StorageError`.
private final class ForeignErrorStore: FileStore {
    struct Broken: Error {}
    func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile { throw Broken() }
}

@Test func aForeignStoreErrorBecomesAnIOError() {
    var files = FileReceiver(ledger: ReceiverLedger(store: ForeignErrorStore(), makeHasher: { TestHasher() }, maxFileSize: 100,
                                                    partialLifetime: .seconds(1), maxPartialsPerSender: 1),
                             chunks: ChunkDecoder(decompressor: nil))
    var events: [TransferReceiver.Event] = []
    #expect(offer(&files, "x", size: 1, events: &events) == .reject(id: sampleID, reason: .couldNotStore))
    guard case .fileFailed(_, _, .couldNotStore(let error)) = events.last else { Issue.record("\(events)"); return }
    #expect(error.code == .io && error.detail.contains("Broken"))
}

@Test func abandoningTheFileInProgressRemovesIt() {
    let store = MemoryFileStore()
    var files = fileReceiver(store)
    var events: [TransferReceiver.Event] = []
    _ = offer(&files, "t.bin", size: 10, events: &events)
    files.abandonCurrent(because: .tampered, from: alice, events: &events)
    #expect(events.last == .fileFailed(sender: "alice", name: "t.bin", .tampered))
    #expect(files.partialCount == 0 && store.openTemporaries == 0 && !files.isReceiving)
}

/// Partials are bounded in all, not only per sender: beyond `maxTotal` waiting, a new one
/// removes the least recently active of anyone's (never one a live connection holds).
@Test func partialsAreBoundedInAllAcrossSenders() {
    let store = MemoryFileStore()
    var table = PartialTransfers(lifetime: .seconds(3_600), maxPerSender: 4, maxTotal: 3)
    for n in 0..<5 {
        let key = PartialTransfers.Key(senderKey: [UInt8(n)], id: TransferID(halves: (UInt64(n), 0)))
        let file = try! store.begin(name: "f\(n)", size: 10, sender: "s\(n)")
        table.insert(.init(name: "f\(n)", size: 10, file: file, hasher: TestHasher(), received: 1,
                           lastActivity: .at(Instant(nanoseconds: UInt64(n))), holder: nil), for: key)
    }
    #expect(table.count == 3)
    #expect(store.openTemporaries == 3, "the two oldest were discarded with their files")
    #expect(table[PartialTransfers.Key(senderKey: [0], id: TransferID(halves: (0, 0)))] == nil)
    #expect(table[PartialTransfers.Key(senderKey: [4], id: TransferID(halves: (4, 0)))] != nil)
}

/// Issue 32: a partial found on disk at start waited `lifetime` again from that start (about
/// twice `--keep-partials` in all). Found 50 minutes old with an hour to live, on a monotonic
/// clock that began at boot a minute ago, it goes 10 minutes later; a sender's resume before
/// then gives it a whole lifetime again. An open folder found on disk is judged the same way.
@Test func aPartialFoundAtStartIsKeptForWhatIsLeftOfItsLifetime() throws {
    let store = MemoryFileStore()
    let boot = Instant.zero.advanced(by: .seconds(60))
    var table = PartialTransfers(lifetime: .seconds(3_600), maxPerSender: 4)
    for n in 0..<2 {
        let point = PartialCheckpoint(senderKey: [UInt8(n)], id: TransferID(halves: (UInt64(n), 0)), name: "f\(n)", size: 10,
                                      durable: 1, prefixHash: [])
        let file = try store.begin(name: "f\(n)", size: 10, sender: "s")
        table.adopt([RecoveredPartial(checkpoint: point, file: file, hasher: TestHasher(), age: .seconds(3_000))], now: boot)
    }
    let resumed = PartialTransfers.Key(senderKey: [1], id: TransferID(halves: (1, 0)))
    table[resumed]?.lastActivity = .at(boot.advanced(by: .seconds(60)))
    table.expire(now: boot.advanced(by: .seconds(590)))
    #expect(table.count == 2, "within the hour")
    table.expire(now: boot.advanced(by: .seconds(610)))
    #expect(table.count == 1 && table[resumed] != nil, "the one not resumed went after its hour")

    var folders = OpenFolders(lifetime: .seconds(3_600), maxPerSender: 4)
    let origin = TreeOrigin(senderKey: [7], tree: TransferID(halves: (7, 0)), folder: TransferID(halves: (7, 1)), top: Array("top".utf8))
    folders.adopt(RecoveredTree(origin: origin, name: "top", tree: try store.beginTree(named: "top", origin: origin),
                                folders: [], files: [], partials: [], age: .seconds(3_000)), now: boot)
    folders.expire(now: boot.advanced(by: .seconds(590)))
    #expect(folders.count == 1)
    folders.expire(now: boot.advanced(by: .seconds(610)))
    #expect(folders.count == 0)
}

/// A `CompletedMemory` in memory, as a restarted receiver finds it.
private final class KeptCompleted: CompletedMemory {
    var recalled: [CompletedTransfer] = []
    func remember(_ transfer: CompletedTransfer) throws { recalled.append(transfer) }
}

/// A file stored just before a restart, whose sender never heard `confirm`: the restarted
/// receiver (a new ledger recalling the completed transfers) answers its re-offer as completed,
/// with the stored name, instead of storing it a second time.
@Test func aFileStoredBeforeARestartIsConfirmedAgainNotStoredTwice() throws {
    let store = MemoryFileStore()
    let kept = KeptCompleted()
    var files = FileReceiver(ledger: ReceiverLedger(store: store, makeHasher: { TestHasher() }, completedMemory: kept),
                             chunks: ChunkDecoder(decompressor: nil))
    var events: [TransferReceiver.Event] = []
    let bytes = pattern(5_000)
    _ = offer(&files, "a.bin", size: 5_000, events: &events)
    _ = try files.receive(.raw(bytes), compressing: false, now: .zero, from: alice, events: &events)
    _ = try files.done(sampleID, hash: hash(bytes), from: alice, events: &events)
    #expect(kept.recalled == [CompletedTransfer(senderKey: alice.key, id: sampleID, storedName: "a.bin", size: 5_000)])

    var restarted = FileReceiver(ledger: ReceiverLedger(store: store, makeHasher: { TestHasher() }, completedMemory: kept),
                                 chunks: ChunkDecoder(decompressor: nil))
    events = []
    #expect(restarted.recall(alice.key(for: sampleID), size: 5_000, now: .zero, from: alice, events: &events)
            == .accept(id: sampleID, offset: 5_000))
    #expect(try restarted.done(sampleID, hash: [], from: alice, events: &events) == [.confirm(id: sampleID, status: .saved, storedName: "a.bin")])
    #expect(store.committed.count == 1)
}
