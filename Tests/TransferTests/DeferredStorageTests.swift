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
    let outcome: Result<String, StorageError>?
    let confirm: TransferMessage
    let stored: [String]

    var testDescription: String { name }
}

private let rows: [DeferredCommitRow] = [
    .init(name: "the work runs: confirmed under the name it got, then the next file's offer is answered",
          outcome: nil, confirm: .confirm(id: sampleID, status: .saved, storedName: "a.bin"), stored: ["a.bin"]),
    .init(name: "the storage failed: couldNotStore, and the session goes on",
          outcome: .failure(StorageError(.io, "disk gone")), confirm: .confirm(id: sampleID, status: .couldNotStore, storedName: ""), stored: []),
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
    let outcome = row.outcome.map { StorageOutcome(ticket: work[0].ticket, result: $0) } ?? work[0].run()
    // A stale ticket changes nothing.
    #expect(try receiver.storageDone(StorageOutcome(ticket: work[0].ticket + 7, result: .success("x")), now: .zero).isEmpty)
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
