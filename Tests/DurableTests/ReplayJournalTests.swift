#if canImport(Glibc)
import Glibc
#endif
import Handshake
import Sodium
import Durable
import TestDoubles
import Testing
import Pipeline

/// Keys 0...4 (32 bytes each), each accepted several times with growing timestamps: 30 records,
/// enough to compact a journal that compacts after 8.
private let workload: [ReplayMemoryEntry] = (0..<30).map { i in
    ReplayMemoryEntry(key: [UInt8](repeating: UInt8(i % 5), count: 32), timestamp: 1_000 + UInt64(i) * 7)
}

/// A record as framed on disk: its length (4), the key and timestamp (40), the check (16).
private let recordSize = 4 + 40 + 16

private func open(_ disk: any DurableDisk) throws(StorageError) -> ReplayJournal {
    try ReplayJournal(disk: disk, name: "replay", capacity: 16, compactAfter: 8)
}

private func recalled(_ journal: ReplayJournal) -> [[UInt8]: UInt64] {
    Dictionary(uniqueKeysWithValues: journal.recalled.map { ($0.key, $0.timestamp) })
}

@Test func aJournalRecallsWhatItRememberedAfterAReopen() throws {
    let disk = SimulatedDisk()
    let journal = try open(disk)
    #expect(journal.recalled.isEmpty)
    for entry in workload { try journal.remember(key: entry.key, timestamp: entry.timestamp) }
    let again = recalled(try open(disk))
    #expect(again.count == 5)
    for key in 0..<5 {
        #expect(again[[UInt8](repeating: UInt8(key), count: 32)] == 1_000 + UInt64(25 + key) * 7)
    }
    // Compacted along the way: one record per key, not 30.
    #expect(try #require(disk.contents("replay")).count <= ReplayJournal.magic.count + 10 * recordSize)
}

/// ALICE-style: the workload stopped by a crash after every step that writes (each append, sync,
/// cut, and each step of a compaction), restarted from each way a power cut may leave the disk.
/// The journal always opens; every timestamp whose `remember` returned is recalled (or a newer
/// one for its key); nothing is recalled that was never remembered; and it goes on remembering.
@Test func aCrashAfterAnyStepLosesNothingThatWasRemembered() throws {
    let clean = SimulatedDisk()
    let journal = try open(clean)
    for entry in workload { try journal.remember(key: entry.key, timestamp: entry.timestamp) }
    let total = clean.steps
    #expect(total > 60)
    var cases = 0
    for crashAfter in 0...total {
        for loss in SimulatedDisk.Loss.allCases {
            let disk = SimulatedDisk()
            disk.crashAfter = crashAfter
            var confirmed: [[UInt8]: UInt64] = [:]
            var attempted: Set<ReplayMemoryEntry> = []
            do {
                let journal = try open(disk)
                for entry in workload {
                    attempted.insert(entry)
                    try journal.remember(key: entry.key, timestamp: entry.timestamp)
                    confirmed[entry.key] = entry.timestamp
                }
            } catch {
                #expect(disk.crashed, "only the crash stops it: \(error)")
            }
            let restarted = disk.afterPowerCut(loss)
            let reopened: ReplayJournal
            do {
                reopened = try open(restarted)
            } catch {
                Issue.record("crash after step \(crashAfter), \(loss): the journal did not open: \(error)")
                continue
            }
            let now = recalled(reopened)
            for (key, timestamp) in confirmed {
                #expect(now[key, default: 0] >= timestamp, "crash after step \(crashAfter), \(loss): key \(key[0]) lost \(timestamp)")
            }
            for entry in reopened.recalled {
                #expect(attempted.contains(entry), "crash after step \(crashAfter), \(loss): \(entry) was never remembered")
            }
            let next = ReplayMemoryEntry(key: [UInt8](repeating: 9, count: 32), timestamp: 9_999)
            try reopened.remember(key: next.key, timestamp: next.timestamp)
            #expect(recalled(try open(restarted))[next.key] == next.timestamp)
            cases += 1
        }
    }
    #expect(cases == (total + 1) * SimulatedDisk.Loss.allCases.count)
}

/// A `remember` that fails half-way (EIO after half of the record was written) is reported, and
/// the next one cuts the torn half off first: a reopen recalls the record after it.
@Test func aFailedRememberLeavesNoTornRecordBeforeTheNext() throws {
    let disk = SimulatedDisk()
    let journal = try open(disk)
    try journal.remember(key: workload[0].key, timestamp: workload[0].timestamp)
    disk.failStep = disk.steps + 1
    #expect(throws: StorageError.self) { try journal.remember(key: workload[1].key, timestamp: workload[1].timestamp) }
    try journal.remember(key: workload[2].key, timestamp: workload[2].timestamp)
    let again = recalled(try open(disk))
    #expect(again[workload[0].key] == workload[0].timestamp)
    #expect(again[workload[2].key] == workload[2].timestamp)
    #expect(again[workload[1].key] == nil)
}

/// Damage: a record whose check fails ends what is read (and is cut off), a file that is not a
/// journal at all starts a new one; neither stops the receiver from starting.
@Test func aDamagedJournalIsCutAtTheFirstBadRecord() throws {
    let disk = SimulatedDisk()
    let journal = try open(disk)
    for entry in workload.prefix(3) { try journal.remember(key: entry.key, timestamp: entry.timestamp) }
    var bytes = try #require(disk.contents("replay"))
    bytes[ReplayJournal.magic.count + recordSize + 33] ^= 0x01
    try disk.replace("replay", with: bytes)
    let reopened = try open(disk)
    #expect(recalled(reopened) == [workload[0].key: workload[0].timestamp])
    #expect(reopened.cutBytes == 2 * recordSize)
    try disk.replace("replay", with: Array("not a journal".utf8))
    #expect(try open(disk).recalled.isEmpty)
}

/// Over capacity, compaction keeps the keys accepted most recently.
@Test func compactionKeepsTheNewestKeysUpToTheCapacity() throws {
    let disk = SimulatedDisk()
    let journal = try ReplayJournal(disk: disk, name: "replay", capacity: 4, compactAfter: 4)
    for i in 0..<10 { try journal.remember(key: [UInt8](repeating: UInt8(i), count: 32), timestamp: UInt64(100 + i)) }
    let kept = try ReplayJournal(disk: disk, name: "replay", capacity: 4, compactAfter: 4).recalled.map(\.timestamp)
    #expect(kept.count <= 5 && kept.contains(109) && !kept.contains(100))
}

/// The real disk: a journal in a fresh folder (made 0700), its file 0600, read back.
@Test func aJournalOnTheRealDiskIsReadBack() throws {
    var template = Array("/tmp/blesend-state-XXXXXX".utf8CString)
    let base = String(cString: try #require(mkdtemp(&template)))
    let folder = base + "/state/blerecv"
    let journal = try ReplayJournal(disk: try PosixDisk(folder: folder), name: "replay")
    try journal.remember(key: workload[3].key, timestamp: 42)
    var status = stat()
    #expect(stat(folder, &status) == 0 && status.st_mode & 0o777 == 0o700)
    #expect(stat(folder + "/replay", &status) == 0 && status.st_mode & 0o777 == 0o600)
    let again = try ReplayJournal(disk: try PosixDisk(folder: folder), name: "replay")
    #expect(again.recalled == [ReplayMemoryEntry(key: workload[3].key, timestamp: 42)])
}

/// A journal of the first format (`BSRPJ001`: fixed 56-byte records, up to 0.4.0) is recalled,
/// and written anew in the one format: an upgrade keeps every sender's newest timestamp.
@Test func aJournalOfTheFirstFormatIsRecalledAndWrittenAnew() throws {
    func legacyRecord(_ entry: ReplayMemoryEntry) -> [UInt8] {
        var body = entry.key
        for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: entry.timestamp >> UInt64(shift))) }
        var hash = BLAKE2b(outputLength: 16)
        hash.update(body)
        return body + hash.finalize()
    }
    let disk = SimulatedDisk()
    let old = Array("BSRPJ001".utf8) + workload.prefix(12).flatMap(legacyRecord) + [1, 2, 3]   // and a torn end
    try disk.replace("replay", with: old)
    let journal = try open(disk)
    let expected = Dictionary(workload.prefix(12).map { ($0.key, $0.timestamp) }, uniquingKeysWith: max)
    #expect(recalled(journal) == expected)
    #expect(disk.contents("replay")?.starts(with: ReplayJournal.magic) == true)
    #expect(recalled(try open(disk)) == expected)
}
