import Pipeline
import Testing
import TestDoubles
import Transfer
@testable import Durable

private let senderKey = [UInt8](repeating: 9, count: 32)
private let head = TreeRecord.head(TreeOrigin(senderKey: senderKey, tree: TransferID(halves: (1, 1)), folder: TransferID(halves: (1, 2)),
                                              top: Array("photos".utf8)), name: "photos")
private let later: [TreeRecord] = [
    .folder(id: TransferID(halves: (2, 1)), path: ["2024"]),
    .checkpoint(id: TransferID(halves: (3, 1)), path: ["2024", "beach.jpg"], size: 9_000, executable: false, durable: 4_096,
                prefixHash: [UInt8](repeating: 5, count: 32)),
    .checkpoint(id: TransferID(halves: (4, 1)), path: ["run.sh"], size: nil, executable: true, durable: 0,
                prefixHash: [UInt8](repeating: 6, count: 32)),
    .file(id: TransferID(halves: (3, 1)), path: ["2024", "beach.jpg"], size: 9_000),
]

private func journalBytes(_ records: [TreeRecord], savedAt: UInt64 = 1_000) -> [UInt8] {
    TreeJournal.magic + records.flatMap { RecordFrame.frame(TreeJournal.encode($0, savedAt: savedAt)) }
}

/// What a journal's contents say (the last word on each path) and how many records it read: two
/// journals that read alike have the same summary.
private func summary(_ contents: TreeJournalContents) -> [String] {
    contents.compacted.map { "\($0)" }.sorted() + ["\(contents.records) records"]
}

/// The summary of a journal holding `records` (a head first).
private func fold(_ records: [TreeRecord]) -> [String] {
    guard let first = records.first, var contents = TreeJournalContents(head: first, savedAt: 0) else { return [] }
    for record in records.dropFirst() { _ = contents.take(record, savedAt: 0) }
    return summary(contents)
}

/// `bytes` as a journal file on a disk, read back as a stream.
private func readBack(_ bytes: [UInt8]) -> (records: [String], savedAt: UInt64, end: UInt64)? {
    let disk = SimulatedDisk()
    guard (try? disk.replace("journal", with: bytes)) != nil, let found = try? TreeJournal.read(in: disk, name: "journal") else { return nil }
    return (summary(found.contents), found.contents.savedAt, found.end)
}

@Test func aTreeJournalRoundTripsEveryRecord() throws {
    let bytes = journalBytes([head] + later)
    let read = try #require(readBack(bytes))
    #expect(read.records == fold([head] + later))
    #expect(read.savedAt == 1_000)
    #expect(read.end == UInt64(bytes.count))
}

@Test func aTreeJournalStopsAtTheFirstDamagedOrCutFrame() throws {
    let good = journalBytes([head, later[0]])
    let bytes = good + journalBytes([later[1]]).dropFirst(TreeJournal.magic.count)
    // A torn last frame: every shorter length reads the first two records, ending where they end.
    for length in good.count..<bytes.count {
        let read = try #require(readBack(Array(bytes.prefix(length))))
        #expect(read.records == fold([head, later[0]]))
        #expect(read.end == UInt64(good.count))
    }
    // A flipped bit in the last frame stops reading there; in the head, nothing reads.
    for index in good.count..<bytes.count {
        var damaged = bytes
        damaged[index] ^= 0x10
        #expect(readBack(damaged)?.records == fold([head, later[0]]), "a flipped bit at \(index) went unnoticed")
    }
    let headEnd = journalBytes([head]).count
    for index in 0..<headEnd {
        var damaged = bytes
        damaged[index] ^= 0x10
        #expect(readBack(damaged) == nil, "a flipped bit at \(index) of the head went unnoticed")
    }
}

@Test func aTreeJournalNeedsOneHeadFirstAndSafePaths() {
    #expect(readBack(journalBytes(later)) == nil)
    #expect(readBack(journalBytes([head, head]))?.records == fold([head]))
    #expect(readBack(journalBytes([head, .folder(id: TransferID(halves: (2, 2)), path: [".."])]))?.records == fold([head]))
    #expect(readBack(journalBytes([head, .file(id: TransferID(halves: (2, 2)), path: ["a", ""], size: 1)]))?.records == fold([head]))
    #expect(readBack(Array("BSKEEP01".utf8) + journalBytes([head]).dropFirst(8)) == nil)
}

/// ALICE-style: a journal created and appended to, stopped after each step, read after each way a
/// power cut may leave it: it reads as the head and the records appended, in order, never fewer
/// than those whose append returned; or, if the cut came before the head was synced, not at all.
@Test func aCrashAfterAnyStepKeepsEveryTreeRecordWhoseAppendReturned() throws {
    let name = ".photos.test-abcdef.blesend-keep"
    let clean = SimulatedDisk()
    let journal = try TreeJournal.create(in: clean, name: name, head: head)
    for record in later { try journal.append(record) }
    let total = clean.steps

    for crashAfter in 0..<total {
        for loss in SimulatedDisk.Loss.allCases {
            let folder = SimulatedDisk()
            folder.crashAfter = crashAfter
            var returned = 0
            var created = false
            if let journal = try? TreeJournal.create(in: folder, name: name, head: head) {
                created = true
                for record in later {
                    guard (try? journal.append(record)) != nil else { break }
                    returned += 1
                }
            }
            let context = "crash after step \(crashAfter), \(loss)"
            let restarted = folder.afterPowerCut(loss)
            guard let read = try? TreeJournal.read(in: restarted, name: name) else {
                #expect(!created, "\(context): a journal whose creation returned does not read")
                continue
            }
            let count = read.contents.records
            #expect(count >= 1 + returned, "\(context): \(count - 1) records, \(returned) returned")
            let kept = Array(([head] + later).prefix(count))
            #expect(summary(read.contents) == fold(kept), "\(context)")

            // Appending after the restart goes on from the good end.
            try read.journal.append(later[3])
            #expect(try TreeJournal.read(in: restarted, name: name).map { summary($0.contents) } == fold(kept + [later[3]]), "\(context)")
        }
    }
}
