import Foundation
import Pipeline
import Sodium
import Durable
import Testing
import TestDoubles
import Transfer
@testable import Storage

/// The whole-file hash, as the session hands it in.
struct Blake: ContentHasher {
    var state = BLAKE2b(outputLength: 32)
    mutating func update(_ bytes: [UInt8]) { state.update(bytes) }
    mutating func finalize() -> [UInt8] { state.finalize() }
}

func hash(_ bytes: [UInt8]) -> [UInt8] {
    var hasher = Blake()
    hasher.update(bytes)
    return hasher.finalize()
}

private let content: [UInt8] = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
private let senderKey = [UInt8](repeating: 7, count: 32)
private let id = TransferID(halves: (1, 2))
private let dataName = ".report.pdf.test-abcdef.blesend-part"

/// Receives `content` from `offset` into `file` in 400-byte writes with a checkpoint after every
/// 1,000 new bytes, as `FileReceiver` does, then commits; `checkpointed` hears of each
/// checkpoint that returned.
private func receive(into file: any IncomingFile, from offset: Int, hasher: any ContentHasher,
                     checkpointed: (Int) -> Void = { _ in }) throws -> String {
    var hasher = hasher
    var at = offset, last = offset
    while at < content.count {
        let piece = Array(content[at..<min(content.count, at + 400)])
        try file.write(piece, at: UInt64(at))
        hasher.update(piece)
        at += piece.count
        if at - last >= 1_000 {
            var prefix = hasher
            try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: id, name: "report.pdf", size: UInt64(content.count),
                                                  durable: UInt64(at), prefixHash: prefix.finalize()))
            last = at
            checkpointed(at)
        }
    }
    #expect(hasher.finalize() == hash(content))
    return try file.commit()
}

private func recover(_ folder: SimulatedDisk, lifetime: UInt64 = 3_600) -> Recovered<RecoveredPartial> {
    PartialRecovery(folder: folder, lifetime: lifetime, makeHasher: { Blake() }).run()
}

@Test func aPartialRecordRoundTripsAndRefusesAnyDamage() {
    let point = PartialCheckpoint(senderKey: senderKey, id: id, name: "résumé.pdf", size: 9_000, durable: 4_096, prefixHash: hash([1, 2]))
    let encoded = PartialRecord(checkpoint: point, savedAt: 1_700_000_000).encoded()
    #expect(PartialRecord(decoding: encoded) == PartialRecord(checkpoint: point, savedAt: 1_700_000_000))
    let stream = PartialCheckpoint(senderKey: senderKey, id: id, name: "s", size: nil, durable: 5, prefixHash: hash([]))
    #expect(PartialRecord(decoding: PartialRecord(checkpoint: stream, savedAt: 1).encoded())?.checkpoint == stream)
    for index in encoded.indices {
        var damaged = encoded
        damaged[index] ^= 0x01
        #expect(PartialRecord(decoding: damaged) == nil, "a flipped bit at \(index) went unnoticed")
    }
    for length in 0..<encoded.count {
        #expect(PartialRecord(decoding: Array(encoded.prefix(length))) == nil)
    }
    #expect(PartialRecord(decoding: encoded + [0]) == nil)
}

/// ALICE-style: the receipt of one file with its checkpoints and commit, stopped after each of its
/// steps, restarted from each way a power cut may leave the folder. The restart never finds a
/// wrong stored file, never both the stored file and a partial of it, never a partial behind the
/// last checkpoint that returned, and always ends with the one right file once the sender resumes.
@Test func aCrashAfterAnyStepNeverCommitsAWrongFileAndResumesFromTheLastCheckpoint() throws {
    let clean = SimulatedDisk()
    try clean.create(dataName)
    #expect(try receive(into: DurableIncomingFile(folder: clean, data: dataName, name: "report.pdf"), from: 0, hasher: Blake()) == "report.pdf")
    #expect(clean.stored == ["report.pdf": content])
    #expect(clean.ownNames().isEmpty)
    let total = clean.steps
    #expect(total > 20)
    // A commit: sync the data, remove the record, sync the folder, link, unlink, sync the folder.
    let commitSteps = 6

    for crashAfter in 0..<total {
        for loss in SimulatedDisk.Loss.allCases {
            let folder = SimulatedDisk()
            folder.crashAfter = crashAfter
            var lastCheckpoint = 0
            _ = try? folder.create(dataName)
            _ = try? receive(into: DurableIncomingFile(folder: folder, data: dataName, name: "report.pdf"), from: 0, hasher: Blake(),
                             checkpointed: { lastCheckpoint = $0 })
            #expect(folder.crashed)

            let restarted = folder.afterPowerCut(loss)
            let outcome = recover(restarted)
            let context = "crash after step \(crashAfter), \(loss)"
            for (name, bytes) in restarted.stored { #expect(bytes == content, "\(context): \(name) stored wrong") }
            #expect(restarted.stored.count + outcome.found.count <= 1, "\(context): stored and partial both")
            if let found = outcome.found.first {
                let durable = Int(found.checkpoint.durable)
                #expect(durable >= lastCheckpoint, "\(context): resumed at \(durable), behind the checkpoint at \(lastCheckpoint)")
                #expect(try restarted.read(dataName, at: 0, count: content.count) == Array(content.prefix(durable)), "\(context)")
                #expect(Set(restarted.ownNames()) == [dataName, TemporaryNames.record(for: dataName)], "\(context)")
                #expect(try receive(into: found.file, from: durable, hasher: found.hasher) == "report.pdf")
            } else {
                #expect(restarted.ownNames().isEmpty, "\(context): leftovers \(restarted.ownNames())")
                if restarted.stored.isEmpty {
                    // Nothing kept: no checkpoint had returned, or the commit had begun (its record
                    // is removed before the file gets its name: that file starts over).
                    #expect(lastCheckpoint == 0 || crashAfter >= total - commitSteps, "\(context): lost the checkpoint at \(lastCheckpoint)")
                    try restarted.create(dataName)
                    _ = try receive(into: DurableIncomingFile(folder: restarted, data: dataName, name: "report.pdf"), from: 0, hasher: Blake())
                }
            }
            #expect(restarted.stored == ["report.pdf": content], "\(context): \(restarted.stored.keys.sorted())")
        }
    }
}

/// A folder holding the first 1,000 bytes of `content`, checkpointed.
private func folderWithAPartialOf1000Bytes() throws -> SimulatedDisk {
    let folder = SimulatedDisk()
    try folder.create(dataName)
    let file = DurableIncomingFile(folder: folder, data: dataName, name: "report.pdf")
    try file.write(Array(content.prefix(1_000)), at: 0)
    try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: id, name: "report.pdf", size: 5_000, durable: 1_000,
                                          prefixHash: hash(Array(content.prefix(1_000)))))
    return folder
}

@Test func recoveryRemovesExpiredDamagedAndUnrecordedTemporaries() throws {
    let folder = try folderWithAPartialOf1000Bytes()
    // A temporary with no record: nothing says what it is.
    try folder.create(".other.test-ghijkl.blesend-part")

    folder.clock += 3_600
    let kept = recover(folder)
    #expect(kept.found.count == 1 && kept.removed == 1)
    #expect(kept.found.first?.checkpoint.durable == 1_000)

    folder.clock += 3_601
    let expired = recover(folder)
    #expect(expired.found.isEmpty && expired.removed == 2)
    #expect(folder.ownNames().isEmpty)
}

@Test func recoveryStartsAFileOverWhoseBytesDoNotHashAsRecorded() throws {
    let folder = try folderWithAPartialOf1000Bytes()
    try folder.write(dataName, [0xFF], at: 500)
    let outcome = recover(folder)
    #expect(outcome.found.isEmpty && outcome.removed == 2)
}

/// The real folder: a partial checkpointed and closed by one store is found by the next with the
/// same tag (cut back to its checkpoint), finished and stored; another receiver's is left alone.
@Test func aPartialKeptByOneRunIsResumedByTheNext() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let other = try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "other", keepPartials: .seconds(3_600))
    let theirs = try other.begin(name: "theirs.bin", size: 10, sender: "bob")
    try theirs.write([1, 2, 3], at: 0)
    theirs.closeForResume()

    var recovered: [RecoveredPartial] = []
    do {
        let first = try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "test", keepPartials: .seconds(3_600))
        let file = try first.begin(name: "report.pdf", size: UInt64(content.count), sender: "alice")
        try file.write(Array(content.prefix(3_000)), at: 0)
        try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: id, name: "report.pdf", size: UInt64(content.count),
                                              durable: 2_000, prefixHash: hash(Array(content.prefix(2_000)))))
        file.closeForResume()
        let names = try listing(dir)
        #expect(names.count == 3 && names.filter { $0.hasSuffix(".blesend-keep") }.count == 1)
        for name in names { #expect(try FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.posixPermissions] as? Int == 0o600) }

        let second = try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "test", keepPartials: .seconds(3_600))
        recovered = second.recoverPartials(makeHasher: { Blake() }).found
        #expect(recovered.count == 1)
        let found = try #require(recovered.first)
        #expect(found.checkpoint.senderKey == senderKey && found.checkpoint.id == id && found.checkpoint.durable == 2_000)
        #expect(try receive(into: found.file, from: 2_000, hasher: found.hasher) == "report.pdf")
        #expect(second.partialDescriptors.isEmpty, "descriptors left open: \(second.partialDescriptors.keys.sorted())")
    }
    #expect(try Array(Data(contentsOf: URL(fileURLWithPath: dir + "/report.pdf"))) == content)
    // Only the other receiver's temporary is left.
    #expect(try listing(dir).filter { $0.hasPrefix(".") }.allSatisfy { $0.contains(".other-") })
    #expect(try listing(dir).count == 2)
}

/// A partial saved in the future (a clock set back) is resumed, and its record's time written as
/// now, so that it expires `--keep-partials` after this start rather than never; one whose file
/// time is past the lifetime is removed without its record being read.
@Test func aPartialSavedInTheFutureIsKeptAsNowAndAnOldFileIsRemovedUnread() throws {
    let folder = SimulatedDisk()
    try folder.create(dataName)
    let file = DurableIncomingFile(folder: folder, data: dataName, name: "report.pdf")
    try file.write(Array(content.prefix(1_000)), at: 0)
    folder.clock = 9_000_000   // the clock when it was saved
    try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: id, name: "report.pdf", size: UInt64(content.count),
                                          durable: 1_000, prefixHash: hash(Array(content.prefix(1_000)))))
    file.closeForResume()
    folder.clock = 2_000_000   // set back
    #expect(recover(folder).found.map(\.age) == [.zero], "saved in the future: it has waited no time")
    let record = try #require(folder.contents(TemporaryNames.record(for: dataName)))
    #expect(PartialRecord(decoding: record)?.savedAt == 2_000_000)

    folder.clock = 2_000_000 + 3_601   // past the lifetime by the file's time: removed unread
    folder.modified[TemporaryNames.record(for: dataName)] = 2_000_000
    let outcome = recover(folder)
    #expect(outcome.found.isEmpty && outcome.removed == 2 && folder.ownNames().isEmpty)
}

/// Issue 32: the receiver's clock for a kept partial restarted at each start, so a partial could
/// wait about twice `--keep-partials`. Recovery now says how long it has waited already (its
/// record's age), which the receiver counts from.
@Test func aRecoveredPartialKnowsHowLongItHasWaited() throws {
    let folder = SimulatedDisk()
    try folder.create(dataName)
    let file = DurableIncomingFile(folder: folder, data: dataName, name: "report.pdf")
    try file.write(Array(content.prefix(1_000)), at: 0)
    folder.clock = 5_000_000
    try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: id, name: "report.pdf", size: UInt64(content.count),
                                          durable: 1_000, prefixHash: hash(Array(content.prefix(1_000)))))
    file.closeForResume()
    folder.clock = 5_000_000 + 3_000   // restarted 50 minutes later, within the hour
    #expect(recover(folder).found.map(\.age) == [.seconds(3_000)])
}

/// Issue 32: a resumed partial was reopened by name. In an output folder others may write into
/// (a group's), two waiting partials swapped by name committed each other's prefixes, and the
/// hash passed (it comes from memory). Now the file a name stood for at recovery is the only one
/// it may stand for: the swapped partial is refused, and nothing is stored under its name.
@Test func swappedPartialsAreNotCommitted() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let other: [UInt8] = content.map { $0 ^ 0x5A }
    do {
        let first = try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "test", keepPartials: .seconds(3_600))
        for (name, bytes, fileID) in [("a.bin", content, id), ("b.bin", other, TransferID(halves: (5, 5)))] {
            let file = try first.begin(name: name, size: UInt64(bytes.count), sender: "alice")
            try file.write(Array(bytes.prefix(2_000)), at: 0)
            try file.checkpoint(PartialCheckpoint(senderKey: senderKey, id: fileID, name: name, size: UInt64(bytes.count),
                                                  durable: 2_000, prefixHash: hash(Array(bytes.prefix(2_000)))))
            file.closeForResume()
        }
    }
    let second = try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "test", keepPartials: .seconds(3_600))
    let recovered = second.recoverPartials(makeHasher: { Blake() }).found
    #expect(recovered.count == 2)
    let a = try #require(recovered.first { $0.checkpoint.name == "a.bin" })
    // Someone swaps the two waiting partials' data by name.
    let data = try listing(dir).filter { $0.hasSuffix(TemporaryNames.suffix) }
    #expect(data.count == 2)
    #expect(rename(dir + "/" + data[0], dir + "/swap") == 0 && rename(dir + "/" + data[1], dir + "/" + data[0]) == 0
            && rename(dir + "/swap", dir + "/" + data[1]) == 0)
    #expect(throws: StorageError.self) { _ = try receive(into: a.file, from: 2_000, hasher: a.hasher) }
    #expect(!FileManager.default.fileExists(atPath: dir + "/a.bin"))
}
