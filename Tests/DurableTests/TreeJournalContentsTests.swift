import Pipeline
import Testing
import TestDoubles
import Transfer
@testable import Durable

private let origin = TreeOrigin(senderKey: [UInt8](repeating: 9, count: 32), tree: TransferID(halves: (1, 1)),
                                folder: TransferID(halves: (1, 2)), top: Array("photos".utf8))
private let head = TreeRecord.head(origin, name: "photos")

private func checkpoint(_ file: UInt64, durable: UInt64) -> TreeRecord {
    .checkpoint(id: TransferID(halves: (3, file)), path: ["f\(file).bin"], size: 1 << 30, executable: false, durable: durable,
                prefixHash: [UInt8](repeating: UInt8(truncatingIfNeeded: durable), count: 32))
}

/// A disk holding the journal "j": `head`, then `records`, each saved at `savedAt`.
private func journalDisk(with records: [TreeRecord], savedAt: UInt64 = 1_000) throws -> SimulatedDisk {
    let disk = SimulatedDisk()
    try disk.replace("j", with: TreeJournal.magic + ([head] + records).flatMap { RecordFrame.frame(TreeJournal.encode($0, savedAt: savedAt)) })
    return disk
}

/// Read as a stream, a journal folds to the last word on each path: a thousand checkpoints of
/// three files are two once compacted (the third file finished), a finished file drops its checkpoints, and the
/// compacted journal reads back the same.
@Test func aJournalFoldsToTheLastWordOnEachPathAndCompactsToIt() throws {
    var records: [TreeRecord] = [.folder(id: TransferID(halves: (2, 1)), path: ["2024"])]
    for step in 1...1_000 { records.append(checkpoint(UInt64(step % 3), durable: UInt64(step) * 4_096)) }
    records.append(.file(id: TransferID(halves: (3, 0)), path: ["f0.bin"], size: 9))
    records.append(checkpoint(0, durable: 5))   // (after its file: ignored)
    let disk = try journalDisk(with: records)
    let read = try #require(try TreeJournal.read(in: disk, name: "j"))
    let contents = read.contents
    #expect(contents.records == 1 + records.count)
    #expect(contents.folders.count == 1 && contents.finished.count == 1 && contents.partway.count == 2)
    #expect(contents.partway["f1.bin"] == checkpoint(1, durable: 1_000 * 4_096))
    #expect(contents.partway["f2.bin"] == checkpoint(2, durable: 998 * 4_096))
    #expect(contents.compacted.count == 5 && contents.compacted.first == head)

    try read.journal.compact(contents, now: 5_000)
    let again = try #require(try TreeJournal.read(in: disk, name: "j")).contents
    #expect(again.records == 5 && again.savedAt == 1_000)
    #expect(again.partway.count == 2 && again.finished["f0.bin"]?.size == 9 && again.folders["2024"] != nil)
    #expect(try disk.length("j") < 1_000)
}

/// A record saved in the future (a clock set back) counts as now: compaction writes now.
@Test func aSavedAtInTheFutureIsCompactedToNow() throws {
    let disk = try journalDisk(with: [checkpoint(1, durable: 10)], savedAt: 9_999_999)
    let read = try #require(try TreeJournal.read(in: disk, name: "j"))
    #expect(read.contents.savedAt == 9_999_999)
    try read.journal.compact(read.contents, now: 2_000)
    #expect(try TreeJournal.read(in: disk, name: "j")?.contents.savedAt == 2_000)
}

/// Bounds: past `maxPaths` paths the fold stops and the journal does not read (its folder is
/// removed at start); a file over `maxBytes` is not read at all.
@Test func aJournalPastItsBoundsDoesNotRead() throws {
    let many = (0...TreeJournal.maxPaths).map { TreeRecord.folder(id: TransferID(halves: (2, UInt64($0))), path: ["d\($0)"]) }
    #expect(try TreeJournal.read(in: try journalDisk(with: Array(many.dropLast())), name: "j") != nil)
    #expect(try TreeJournal.read(in: try journalDisk(with: many), name: "j") == nil)
    let big = try journalDisk(with: [])
    try big.write("j", [0], at: TreeJournal.maxBytes)
    #expect(try TreeJournal.read(in: big, name: "j") == nil)
}

/// Expiry, as a table: a time in the future or unknown never expires; the lifetime is inclusive.
@Test(arguments: [
    (UInt64?.none, false), (UInt64?.some(10_000), false), (UInt64?.some(5_000), false),
    (UInt64?.some(4_000), false), (UInt64?.some(3_999), true), (UInt64?.some(0), true),
])
func expiryIsJudgedFromTheTimeOnDisk(time: UInt64?, passed: Bool) {
    #expect(Expiry(lifetime: 1_000, now: 5_000).passed(time) == passed)
}
