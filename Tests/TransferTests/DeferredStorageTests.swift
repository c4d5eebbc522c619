import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// Issue 32: a receiver that defers storage hands each commit out as `StorageWork`, confirms the
/// file only when the outcome is in, and keeps what the sender sends meanwhile, in order.

private let second = TransferID(halves: (2, 0))

private func hash(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = TestHasher()
    hasher.update(bytes)
    return hasher.finalize()
}

private func offer(_ id: TransferID, _ bytes: [UInt8], name: String) -> [TransferMessage] {
    [.offer(.init(id: id, size: UInt64(bytes.count), name: name)), .data(bytes), .done(id: id, hash: hash(bytes))]
}

/// A deferring receiver that has taken `a.bin`'s offer (its answer dropped).
private func receiver(_ store: MemoryFileStore, ledger: ReceiverLedger? = nil) throws -> TransferReceiver {
    let ledger = ledger ?? ReceiverLedger(store: store, makeHasher: { TestHasher() })
    var receiver = TransferReceiver(ledger: ledger)
    receiver.defersStorage = true
    _ = try receiver.begin(sender: "alice", senderKey: [1], opening: [.offer(.init(id: sampleID, size: 3, name: "a.bin"))], now: .zero)
    return receiver
}

struct DeferredCommitRow: Sendable, CustomTestStringConvertible {
    let name: String
    /// What the worker says of `a.bin`'s commit (nil: run the work for real).
    let failure: StorageError?
    let confirm: TransferMessage
    let stored: [String]

    var testDescription: String { name }
}

private let rows: [DeferredCommitRow] = [
    .init(name: "the work runs: confirmed under the name it got, then the next file's offer is answered",
          failure: nil, confirm: .confirm(id: sampleID, status: .saved, storedName: "a.bin"), stored: ["a.bin"]),
    .init(name: "the storage failed: couldNotStore, and the session goes on",
          failure: StorageError(.io, "disk gone"), confirm: .confirm(id: sampleID, status: .couldNotStore, storedName: ""), stored: []),
]

@Test(arguments: rows)
func aDeferredCommitConfirmsOnlyWithItsOutcome(_ row: DeferredCommitRow) throws {
    let store = MemoryFileStore()
    var receiver = try receiver(store)
    let bytes: [UInt8] = [7, 8, 9]
    #expect(try receiver.receive(.data(bytes), now: .zero).isEmpty)
    #expect(try receiver.receive(.done(id: sampleID, hash: hash(bytes)), now: .zero).isEmpty, "no confirm before the outcome")
    let work = receiver.takeStorageWork()
    #expect(work.count == 1 && receiver.isAwaitingStorage && store.committed.isEmpty)
    // Meanwhile the next file and the goodbye wait, unanswered.
    for message in offer(second, [1], name: "b.bin") + [.bye] { #expect(try receiver.receive(message, now: .zero).isEmpty) }
    #expect(!receiver.sessionEnded)
    let outcome = row.failure.map { StorageOutcome(ticket: work[0].ticket, result: .failure($0)) } ?? work[0].run()
    // A stale ticket changes nothing.
    #expect(try receiver.storageDone(StorageOutcome(ticket: work[0].ticket + 7, result: .success(.committed(storedName: "x"))), now: .zero).isEmpty)
    let replies = try receiver.storageDone(outcome, now: .zero)
    #expect(replies == [row.confirm, .accept(id: second, offset: 0)])
    #expect(Array(store.committed.keys) == row.stored)
    // b.bin's commit is out in turn; its outcome lets the goodbye through.
    let next = receiver.takeStorageWork()
    #expect(next.count == 1)
    #expect(try receiver.storageDone(next[0].run(), now: .zero) == [.confirm(id: second, status: .saved, storedName: "b.bin"), .bye])
    #expect(receiver.sessionEnded && !receiver.isAwaitingStorage && receiver.partialCount == 0)
}

@Test func aSenderFarAheadOfACommitIsStopped() throws {
    var receiver = try receiver(MemoryFileStore())
    _ = try receiver.receive(.data([1, 2, 3]), now: .zero)
    _ = try receiver.receive(.done(id: sampleID, hash: hash([1, 2, 3])), now: .zero)
    let chunk = [UInt8](repeating: 0, count: TransferConstants.maxDataPerRecord)
    #expect(throws: TransferError.tooFarAhead) {
        for _ in 0...(TransferReceiver.maxBacklogCost / chunk.count) { _ = try receiver.receive(.data(chunk), now: .zero) }
    }
}

/// When the other connection's commit settles, against the re-offered file's `done`.
struct ReofferRow: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the outcome is in before the `done` comes.
    let settledBeforeDone: Bool
    /// What the other connection's worker says (nil: the work runs for real).
    let failure: StorageError?
    let confirm: TransferMessage

    var testDescription: String { name }
}

private let reoffers: [ReofferRow] = [
    .init(name: "settled before its done: confirmed at once", settledBeforeDone: true, failure: nil,
          confirm: .confirm(id: sampleID, status: .saved, storedName: "a.bin")),
    .init(name: "settled after its done: the done waits, then confirmed", settledBeforeDone: false, failure: nil,
          confirm: .confirm(id: sampleID, status: .saved, storedName: "a.bin")),
    .init(name: "the commit failed: couldNotStore, as on the other connection", settledBeforeDone: false,
          failure: StorageError(.io, "disk gone"), confirm: .confirm(id: sampleID, status: .couldNotStore, storedName: "")),
]

/// The sender's link dropped as its file ended and it came back on another connection before
/// the worker was done: the re-offer is answered as completed (at full size), and its `done`
/// gets the commit's real outcome; what follows the `done` waits with it, in order.
@Test(arguments: reoffers)
func aReofferDuringItsCommitIsAnsweredWithTheCommitsOutcome(_ row: ReofferRow) throws {
    let store = MemoryFileStore()
    let kept = KeptRecords()
    let ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() }, completedMemory: kept)
    var first = try receiver(store, ledger: ledger)
    _ = try first.receive(.data([1, 2, 3]), now: .zero)
    _ = try first.receive(.done(id: sampleID, hash: hash([1, 2, 3])), now: .zero)
    let work = first.takeStorageWork()
    first.connectionLost(now: .zero)
    var again = TransferReceiver(ledger: ledger)
    #expect(try again.begin(sender: "alice", senderKey: [1], opening: [.offer(.init(id: sampleID, size: 3, name: "a.bin"))], now: .zero)
            == [.accept(id: sampleID, offset: 3)])
    let settle = {
        let outcome = row.failure.map { StorageOutcome(ticket: work[0].ticket, result: .failure($0)) } ?? work[0].run()
        // Answers to a connection that ended are dropped; the ledger learns of the file.
        _ = try first.storageDone(outcome, now: .zero)
    }
    if row.settledBeforeDone { try settle() }
    let sent = [TransferMessage.done(id: sampleID, hash: hash([1, 2, 3]))] + offer(second, [5], name: "b.bin").prefix(1)
    var replies: [TransferMessage] = []
    for message in sent { replies += try again.receive(message, now: .zero) }
    if !row.settledBeforeDone {
        #expect(replies.isEmpty, "the done and the next offer wait")
        let look = try #require(again.nextDeadline)
        #expect(try again.handleTimers(now: look).isEmpty, "still out: looked at again later")
        let later = try #require(again.nextDeadline)
        #expect(later > look)
        try settle()
        replies = try again.handleTimers(now: later)
    }
    #expect(replies == [row.confirm, .accept(id: second, offset: 0)])
    #expect(again.nextDeadline == nil)
    #expect(store.committed == (row.failure == nil ? ["a.bin": [1, 2, 3]] : [:]))
    // The work wrote the file down as completed (on the worker's thread), once.
    #expect(kept.recalled.map(\.storedName) == (row.failure == nil ? ["a.bin"] : []))
}

/// A `CompletedMemory` in memory.
private final class KeptRecords: CompletedMemory {
    var recalled: [CompletedTransfer] = []
    func remember(_ transfer: CompletedTransfer) throws { recalled.append(transfer) }
}

// MARK: - Checkpoints

/// A file long enough for one checkpoint (at `TransferConstants.checkpointInterval`).
private let long: [UInt8] = (0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
private let longKey = PartialTransfers.Key(senderKey: [1], id: sampleID)

private func longOffer() -> TransferMessage { .offer(.init(id: sampleID, size: UInt64(long.count), name: "long.bin")) }

/// A deferring receiver that took `long.bin`'s offer and its data up to the checkpoint, which
/// is out as the work returned; the rest of the data is `rest`.
private func receiverAtCheckpoint(_ ledger: ReceiverLedger) throws -> (receiver: TransferReceiver, work: StorageWork, rest: ArraySlice<UInt8>) {
    var receiver = TransferReceiver(ledger: ledger)
    receiver.defersStorage = true
    #expect(try receiver.begin(sender: "alice", senderKey: [1], opening: [longOffer()], now: .zero) == [.accept(id: sampleID, offset: 0)])
    var fed = 0
    while fed < long.count {
        let end = min(fed + TransferConstants.maxDataPerRecord, long.count)
        _ = try receiver.receive(.data(Array(long[fed..<end])), now: .zero)
        fed = end
        if let work = receiver.takeStorageWork().first {
            #expect(work.kind == .checkpoint && fed == Int(TransferConstants.checkpointInterval) && receiver.isAwaitingStorage)
            return (receiver, work, long[fed...])
        }
    }
    Issue.record("no checkpoint went out")
    throw TransferError.tooFarAhead
}

/// Sends `rest` and the `done`; the replies.
private func finish(_ receiver: inout TransferReceiver, _ rest: ArraySlice<UInt8>, now: Instant = .zero) throws -> [TransferMessage] {
    var replies: [TransferMessage] = []
    var at = rest.startIndex
    while at < rest.endIndex {
        let end = min(at + TransferConstants.maxDataPerRecord, rest.endIndex)
        replies += try receiver.receive(.data(Array(rest[at..<end])), now: now)
        at = end
    }
    return replies + (try receiver.receive(.done(id: sampleID, hash: hash(long)), now: now))
}

/// A checkpoint runs on the worker too: the data after it waits for its outcome. Written, the
/// file is durable that far and goes on; failed, the file is removed and refused (as when a
/// checkpoint fails on the spot).
@Test(arguments: [true, false])
func aDeferredCheckpointHoldsTheConnectionUntilItsOutcome(written: Bool) throws {
    let store = MemoryFileStore()
    let ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() })
    var (receiver, work, rest) = try receiverAtCheckpoint(ledger)
    let next = rest.prefix(TransferConstants.maxDataPerRecord)
    #expect(try receiver.receive(.data(Array(next)), now: .zero).isEmpty, "the next data waits")
    let outcome = written ? work.run() : StorageOutcome(ticket: work.ticket, result: .failure(StorageError(.io, "disk gone")))
    let replies = try receiver.storageDone(outcome, now: .zero)
    if written {
        #expect(replies.allSatisfy { if case .ack = $0 { true } else { false } })
        #expect(ledger.partials[longKey]?.checkpointed == TransferConstants.checkpointInterval)
        #expect(ledger.partials[longKey]?.received == TransferConstants.checkpointInterval + UInt64(next.count), "the data that waited is written")
        _ = try finish(&receiver, rest.dropFirst(next.count))
        let commit = receiver.takeStorageWork()
        #expect(commit.map(\.kind) == [.commitFile])
        #expect(try receiver.storageDone(commit[0].run(), now: .zero) == [.confirm(id: sampleID, status: .saved, storedName: "long.bin")])
        #expect(store.committed["long.bin"] == long)
    } else {
        #expect(replies == [.reject(id: sampleID, reason: .couldNotStore)])
        #expect(try finish(&receiver, rest.dropFirst(next.count)).isEmpty, "the rest of its data and its done are ignored")
        #expect(receiver.partialCount == 0 && store.committed.isEmpty && receiver.takeStorageWork().isEmpty)
        #expect(receiver.takeEvents().contains(.fileFailed(sender: "alice", name: "long.bin", .couldNotStore(StorageError(.io, "disk gone")))))
    }
}

/// The link drops while a checkpoint is out: the file stays held (no expiry, no eviction takes it
/// from under the worker) until the outcome is in; then it waits for its sender as usual.
@Test func aFileWhoseCheckpointIsOutIsHeldPastItsLinksEnd() throws {
    let ledger = ReceiverLedger(store: MemoryFileStore(), makeHasher: { TestHasher() }, partialLifetime: .seconds(60))
    var (receiver, work, _) = try receiverAtCheckpoint(ledger)
    receiver.connectionLost(now: .zero)
    let muchLater = Instant.zero.advanced(by: .seconds(3_600))
    receiver.expirePartials(now: muchLater)
    #expect(ledger.partials[longKey]?.holder != nil, "held while the worker has it")
    #expect(try receiver.storageDone(work.run(), now: muchLater).isEmpty)
    #expect(ledger.partials[longKey]?.holder == nil && ledger.partials[longKey]?.checkpointed == TransferConstants.checkpointInterval)
    receiver.expirePartials(now: muchLater.advanced(by: .seconds(61)))
    #expect(ledger.partials[longKey] == nil, "and expires as any waiting file")
}

/// The sender comes back on another connection while its file's checkpoint is out on the first:
/// the resume is answered at once, its data waits for the outcome, then the file completes whole.
@Test func aResumeDuringACheckpointWritesOnlyAfterIt() throws {
    let store = MemoryFileStore()
    let ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() })
    var (first, work, rest) = try receiverAtCheckpoint(ledger)
    first.connectionLost(now: .zero)
    var again = TransferReceiver(ledger: ledger)
    #expect(try again.begin(sender: "alice", senderKey: [1], opening: [longOffer()], now: .zero)
            == [.accept(id: sampleID, offset: TransferConstants.checkpointInterval)])
    #expect(try finish(&again, rest).isEmpty, "its data waits")
    let look = try #require(again.nextDeadline)
    #expect(try again.handleTimers(now: look).isEmpty)
    #expect(try first.storageDone(work.run(), now: look).isEmpty)
    let replies = try again.handleTimers(now: try #require(again.nextDeadline))
    #expect(replies.last == .confirm(id: sampleID, status: .saved, storedName: "long.bin"))
    #expect(store.committed["long.bin"] == long)
}

/// A record of the file fails authentication while its checkpoint is out: the file is removed
/// once the worker is done with it, not from under it.
@Test func aFileAbandonedDuringItsCheckpointIsRemovedAfterIt() throws {
    let ledger = ReceiverLedger(store: MemoryFileStore(), makeHasher: { TestHasher() })
    var (receiver, work, _) = try receiverAtCheckpoint(ledger)
    receiver.abandonCurrent(because: .tampered)
    #expect(ledger.partials[longKey] != nil)
    #expect(try receiver.storageDone(work.run(), now: .zero).isEmpty)
    #expect(ledger.partials[longKey] == nil)
    #expect(receiver.takeEvents().contains(.fileFailed(sender: "alice", name: "long.bin", .tampered)))
}

// MARK: - Folders

/// A folder inside a sent folder is made on the worker, and the sent folder's commit runs there;
/// each is answered with its outcome. The sender, back on another connection while the commit is
/// out, sends the commit again: it waits and gets the same answer. The folder is placed once.
@Test(arguments: [true, false])
func aSentFolderIsMadeAndCommittedOnTheWorker(committed: Bool) throws {
    let store = MemoryFileStore()
    let kept = KeptRecords()
    let ledger = ReceiverLedger(store: store, makeHasher: { TestHasher() }, trees: store, completedMemory: kept)
    var receiver = TransferReceiver(ledger: ledger)
    receiver.defersStorage = true
    let tree = TransferID(halves: (5, 0)), top = TransferID(halves: (5, 1)), sub = TransferID(halves: (5, 2)), file = TransferID(halves: (5, 3))
    #expect(try receiver.begin(sender: "alice", senderKey: [1], opening: [.hello(.folders), .folder(id: top, tree: tree, path: Array("album".utf8))],
                               now: .zero).last == .confirm(id: top, status: .saved, storedName: "album"))
    #expect(try receiver.receive(.folder(id: sub, tree: tree, path: Array("album/2024".utf8)), now: .zero).isEmpty)
    let make = receiver.takeStorageWork()
    #expect(make.map(\.kind) == [.makeFolder])
    // The entry waits behind the folder.
    #expect(try receiver.receive(.entry(.init(id: file, tree: tree, size: 1, executable: false, path: Array("album/2024/a".utf8))), now: .zero).isEmpty)
    #expect(try receiver.storageDone(make[0].run(), now: .zero)
            == [.confirm(id: sub, status: .saved, storedName: "2024"), .accept(id: file, offset: 0)])
    _ = try receiver.receive(.data([9]), now: .zero)
    _ = try receiver.receive(.done(id: file, hash: hash([9])), now: .zero)
    let fileCommit = receiver.takeStorageWork()
    #expect(try receiver.storageDone(fileCommit[0].run(), now: .zero) == [.confirm(id: file, status: .saved, storedName: "2024/a")])
    #expect(try receiver.receive(.commit(tree: tree), now: .zero).isEmpty)
    let commit = receiver.takeStorageWork()
    #expect(commit.map(\.kind) == [.commitFolder])
    receiver.connectionLost(now: .zero)
    // Back on another connection, the sender sends the commit again (its opening): the answer,
    // message 2's, waits for the outcome.
    var again = TransferReceiver(ledger: ledger)
    #expect(try again.begin(sender: "alice", senderKey: [1], opening: [.hello(.folders), .commit(tree: tree)], now: .zero)
            == [.hello(.folders)])
    #expect(again.openingWaits)
    let look = try #require(again.nextDeadline)
    #expect(try again.handleTimers(now: look).isEmpty)
    let outcome = committed ? commit[0].run() : StorageOutcome(ticket: commit[0].ticket, result: .failure(StorageError(.io, "disk gone")))
    // The first connection's answer (its session drops it: that link is gone).
    #expect(try receiver.storageDone(outcome, now: look)
            == [.confirm(id: tree, status: committed ? .saved : .couldNotStore, storedName: committed ? "album" : "")])
    let expected: TransferMessage = committed ? .confirm(id: tree, status: .saved, storedName: "album") : .reject(id: tree, reason: .noFolder)
    #expect(try again.handleTimers(now: try #require(again.nextDeadline)) == [expected])
    #expect(!again.openingWaits)
    #expect(store.committed == (committed ? ["album/2024/a": [9]] : [:]))
    #expect(kept.recalled.map(\.storedName) == (committed ? ["2024/a", "album"] : ["2024/a"]))
}

/// The link drops mid-file: the file's last checkpoint (all that arrived) goes out to the worker
/// too, the file held until it is in; then it waits for its sender, durable that far.
@Test func theLastCheckpointAtALinksEndRunsOnTheWorker() throws {
    let ledger = ReceiverLedger(store: MemoryFileStore(), makeHasher: { TestHasher() })
    var receiver = TransferReceiver(ledger: ledger)
    receiver.defersStorage = true
    _ = try receiver.begin(sender: "alice", senderKey: [1], opening: [longOffer()], now: .zero)
    _ = try receiver.receive(.data(Array(long.prefix(1_000))), now: .zero)
    #expect(receiver.takeStorageWork().isEmpty)
    receiver.connectionLost(now: .zero)
    let work = receiver.takeStorageWork()
    #expect(work.map(\.kind) == [.checkpoint] && receiver.isAwaitingStorage)
    #expect(ledger.partials[longKey]?.holder != nil && ledger.partials[longKey]?.checkpointed == 0)
    #expect(try receiver.storageDone(work[0].run(), now: .zero).isEmpty)
    #expect(ledger.partials[longKey]?.holder == nil && ledger.partials[longKey]?.checkpointed == 1_000)
}

/// A batch that waited (here behind `a`'s commit) is answered in order when the wait ends; when
/// one of its messages sends work out again (`b`'s `done`), the rest of the batch waits ahead of
/// what came after it. (Found in the lab: the rest went behind, a file's data came before its
/// offer, and the receiver took the sender for a rule-breaker.)
@Test func theRestOfABatchWaitsAheadOfWhatCameAfterIt() throws {
    let store = MemoryFileStore()
    var receiver = TransferReceiver(ledger: ReceiverLedger(store: store, makeHasher: { TestHasher() }))
    receiver.defersStorage = true
    _ = try receiver.begin(sender: "alice", senderKey: [1], opening: [.hello(.pipelining), .offer(.init(id: sampleID, size: 3, name: "a.bin"))],
                           now: .zero)
    _ = try receiver.receive(.data([7, 8, 9]), now: .zero)
    _ = try receiver.receive(.done(id: sampleID, hash: hash([7, 8, 9])), now: .zero)
    let third = TransferID(halves: (3, 0))
    let later = offer(third, [3], name: "c.bin")
    #expect(try receiver.receive(.batch(offer(second, [2], name: "b.bin") + [later[0]]), now: .zero).isEmpty)
    for message in later.dropFirst() { #expect(try receiver.receive(message, now: .zero).isEmpty) }
    var replies: [TransferMessage] = []
    while let work = receiver.takeStorageWork().first {
        replies += try receiver.storageDone(work.run(), now: .zero)
    }
    #expect(replies == [.confirm(id: sampleID, status: .saved, storedName: "a.bin"), .accept(id: second, offset: 0),
                        .confirm(id: second, status: .saved, storedName: "b.bin"), .accept(id: third, offset: 0),
                        .confirm(id: third, status: .saved, storedName: "c.bin")])
    #expect(store.committed == ["a.bin": [7, 8, 9], "b.bin": [2], "c.bin": [3]])
}
