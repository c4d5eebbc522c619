import Handshake
import Durable
import TestDoubles
import Transfer
import Testing

private func entry(_ i: Int) -> HistoryEntry {
    HistoryEntry(time: 1_700_000_000 + UInt64(i), direction: i % 2 == 0 ? .sent : .received, outcome: i % 5 == 4 ? .failed : .saved,
                 resumed: i % 3 == 0, size: UInt64(i) * 1_000, airBytes: i % 4 == 0 ? nil : UInt64(i) * 1_100,
                 hash: i % 5 == 4 ? [] : [UInt8](repeating: UInt8(i), count: 32), peer: "peer-\(i)",
                 fingerprint: "4807 b78a d4e6 cc2f 1781 5a1c 6f36 720e", path: "/out/file-\(i) ümlaut.bin",
                 transport: i % 2 == 0 ? "l2cap" : "gatt", detail: i % 5 == 4 ? "the hash did not match" : "")
}

@Test func aHistoryReadsBackWhatWasAppendedInOrder() throws {
    let disk = SimulatedDisk()
    let history = try HistoryJournal(disk: disk, name: "history")
    for i in 0..<10 { try history.append(entry(i)) }
    #expect(try HistoryJournal(disk: disk, name: "history").entries() == (0..<10).map(entry))
}

@Test func aHistoryStaysWithinItsBoundKeepingTheNewest() throws {
    let disk = SimulatedDisk()
    let history = try HistoryJournal(disk: disk, name: "history", maxBytes: 4_096)
    for i in 0..<200 { try history.append(entry(i)) }
    let kept = try history.entries()
    #expect(try #require(disk.contents("history")).count <= 4_096)
    #expect(kept.last == entry(199) && kept.count >= 10)
    #expect(kept == (200 - kept.count..<200).map(entry), "the newest, in order, none lost between them")
}

/// ALICE-style: 40 appends (with compactions at a 4 KiB bound) stopped by a crash after each
/// step that writes, restarted from each way a power cut may leave the disk: the history always
/// opens; what it reads is entries that were appended, in order, ending with the last one whose
/// append returned, or a later one; and it goes on appending.
@Test func aCrashAfterAnyStepKeepsEveryEntryWhoseAppendReturned() throws {
    let clean = SimulatedDisk()
    let history = try HistoryJournal(disk: clean, name: "history", maxBytes: 4_096)
    for i in 0..<40 { try history.append(entry(i)) }
    let total = clean.steps
    for crashAfter in 0..<total {
        for loss in SimulatedDisk.Loss.allCases {
            let disk = SimulatedDisk()
            disk.crashAfter = crashAfter
            var returned = -1
            if let history = try? HistoryJournal(disk: disk, name: "history", maxBytes: 4_096) {
                for i in 0..<40 {
                    guard (try? history.append(entry(i))) != nil else { break }
                    returned = i
                }
            }
            let context = "crash after step \(crashAfter), \(loss)"
            let restarted = try HistoryJournal(disk: disk.afterPowerCut(loss), name: "history", maxBytes: 4_096)
            let read = try restarted.entries()
            let indices = read.map { Int($0.time - 1_700_000_000) }
            #expect(read == indices.map(entry), "\(context): an entry that was never appended")
            #expect(indices == indices.sorted() && Set(indices).count == indices.count, "\(context): out of order")
            if returned >= 0 { #expect(indices.last.map { $0 >= returned } == true, "\(context): lost entry \(returned): \(indices)") }
            try restarted.append(entry(99))
            #expect(try restarted.entries().last == entry(99), "\(context)")
        }
    }
}

/// The completed-transfers memory: what a receiver stored is recalled after a reopen, in order;
/// a damaged tail is skipped; past its bound the newest are kept.
@Test func completedTransfersAreRecalledAfterAReopen() throws {
    let disk = SimulatedDisk()
    let journal = try CompletedJournal(disk: disk, name: "completed", maxBytes: 4_096)
    #expect(journal.recalled.isEmpty)
    let done = (0..<100).map { i in
        CompletedTransfer(senderKey: [UInt8](repeating: UInt8(i % 3), count: 32), id: TransferID(halves: (UInt64(i), 7)),
                          storedName: "file-\(i).bin", size: UInt64(i) * 10)
    }
    for transfer in done { try journal.remember(transfer) }
    let again = try CompletedJournal(disk: disk, name: "completed", maxBytes: 4_096).recalled
    #expect(again.last == done.last && again.count >= 10)
    #expect(again == Array(done.suffix(again.count)))
    try disk.write("completed", [0, 0, 0, 9, 1, 2], at: try disk.length("completed"))
    #expect(try CompletedJournal(disk: disk, name: "completed", maxBytes: 4_096).recalled == again)
}

/// ALICE-style, for the bounded journals (the history, the completed transfers) and a record
/// written whole (an outgoing transfer id): the workload stopped by a crash after every step that
/// writes, restarted from each way a power cut may leave the disk. The journal always opens; what
/// it recalls is a run of what was appended, in order, ending no earlier than the last append
/// that returned (compaction may drop the oldest, never a newer one); and it goes on appending.
@Test(arguments: ["history", "completed", "record"])
func aCrashAfterAnyStepKeepsEveryRecordKindsNewestAppend(kind: String) throws {
    let magic = Array("BSSWEEP1".utf8)
    // Each kind as a journal of numbered records: history and completed bounded (compacting
    // along the way), a record file written whole each time.
    func run(on disk: SimulatedDisk, upTo count: Int, returned: inout Int) throws {
        switch kind {
        case "history":
            let history = try HistoryJournal(disk: disk, name: "h", maxBytes: 4_096)
            for i in 0..<count { try history.append(entry(i)); returned = i + 1 }
        case "completed":
            let completed = try CompletedJournal(disk: disk, name: "h", maxBytes: 4_096)
            for i in 0..<count { try completed.remember(transfer(i)); returned = i + 1 }
        default:
            for i in 0..<count { _ = try Journal.write(disk: disk, name: "h", magic: magic, records: [[UInt8(i)]]); returned = i + 1 }
        }
    }
    func recall(_ disk: SimulatedDisk) throws -> [Int] {
        switch kind {
        case "history": return try HistoryJournal(disk: disk, name: "h", maxBytes: 4_096).entries().map { Int($0.time - 1_700_000_000) }
        case "completed": return try CompletedJournal(disk: disk, name: "h", maxBytes: 4_096).recalled.map { Int($0.size / 10) }
        default:
            guard disk.exists("h") else { return [] }
            return try Journal.open(disk: disk, name: "h", magic: magic).0.records().map { Int($0.first ?? 0) }
        }
    }
    let count = kind == "record" ? 6 : 40
    let clean = SimulatedDisk()
    var ignored = 0
    try run(on: clean, upTo: count, returned: &ignored)
    let total = clean.steps
    for crashAfter in 0...total {
        for loss in SimulatedDisk.Loss.allCases {
            let disk = SimulatedDisk()
            disk.crashAfter = crashAfter
            var returned = 0
            do { try run(on: disk, upTo: count, returned: &returned) } catch { #expect(disk.crashed, "\(error)") }
            let context = "\(kind): crash after step \(crashAfter), \(loss)"
            let restarted = disk.afterPowerCut(loss)
            let recalled: [Int]
            do { recalled = try recall(restarted) } catch { Issue.record("\(context): does not open: \(error)"); continue }
            if let first = recalled.first {
                #expect(recalled == Array(first..<(first + recalled.count)), "\(context): \(recalled)")
            }
            #expect((recalled.last ?? -1) >= returned - 1 && (recalled.last ?? -1) < count, "\(context): \(recalled), \(returned) returned")
            var again = 0
            try run(on: restarted, upTo: 1, returned: &again)
            #expect(again == 1, "\(context): cannot append after the restart")
        }
    }
}

private func transfer(_ i: Int) -> CompletedTransfer {
    CompletedTransfer(senderKey: [UInt8](repeating: 1, count: 32), id: TransferID(halves: (UInt64(i), 1)), storedName: "f\(i)", size: UInt64(i) * 10)
}
