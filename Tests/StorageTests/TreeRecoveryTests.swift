import Dispatch
import Foundation
import Synchronization
@testable import Durable
import Testing
import Transfer
@testable import Storage

private let sender = [UInt8](repeating: 4, count: 32)
private let treeID = TransferID(halves: (7, 7))
private let folderID = TransferID(halves: (7, 8)), doneID = TransferID(halves: (7, 9))
private let partID = TransferID(halves: (7, 10)), strayID = TransferID(halves: (7, 11))
private let origin = TreeOrigin(senderKey: sender, tree: treeID, folder: TransferID(halves: (7, 6)), top: Array("photos".utf8))
private let big: [UInt8] = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }

private func keepingStore(_ dir: String) throws -> DirectoryFileStore {
    try DirectoryFileStore(directory: dir, modes: FileModes(umask: 0o022), temporaryTag: "test", keepPartials: .seconds(3_600))
}

/// A folder part-way, left as a crash leaves it: a made folder, a finished file, a file
/// checkpointed at 1,000 bytes with 1,000 more written after, and a file begun and never
/// checkpointed. Returns the staging folder's path.
@discardableResult
private func leaveAFolderPartWay(in dir: String) throws -> String {
    let store = try keepingStore(dir)
    let tree = try store.beginTree(topName: "photos", origin: origin)
    try tree.makeFolder(["2024"], id: folderID)
    let done = try tree.beginFile(["2024", "a.txt"], id: doneID, size: 5, executable: false)
    try done.write(Array("hello".utf8), at: 0)
    #expect(try done.commit() == "2024/a.txt")
    let part = try tree.beginFile(["2024", "b.bin"], id: partID, size: UInt64(big.count), executable: true)
    try part.write(Array(big.prefix(1_000)), at: 0)
    try part.checkpoint(PartialCheckpoint(senderKey: sender, id: partID, name: "photos/2024/b.bin", size: UInt64(big.count),
                                          durable: 1_000, prefixHash: hash(Array(big.prefix(1_000)))))
    try part.write(Array(big[1_000..<2_000]), at: 1_000)
    let stray = try tree.beginFile(["c.txt"], id: strayID, size: 10, executable: false)
    try stray.write(Array("x".utf8), at: 0)
    // Nothing more is recorded: the files and the folder stay as they are.
    part.closeForResume()
    stray.closeForResume()
    tree.closeForResume()
    let hidden = try listing(dir).filter { $0.hasSuffix(TemporaryNames.suffix) }
    #expect(hidden.count == 1)
    #expect(try listing(dir).contains(TemporaryNames.record(for: try #require(hidden.first))))
    return dir + "/" + (try #require(hidden.first))
}

@Test func aFolderKeptAcrossRunsIsTakenUpWhereItWas() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try leaveAFolderPartWay(in: dir)

    let store = try keepingStore(dir)
    // The partial files' recovery, which runs first, leaves the folder and its journal alone.
    #expect(store.recoverPartials(makeHasher: { Blake() }).found.isEmpty)
    let trees = store.recoverTrees(makeHasher: { Blake() }).found
    #expect(trees.count == 1)
    let tree = try #require(trees.first)
    #expect(tree.origin == origin && tree.name == "photos")
    #expect(tree.folders.map(\.id) == [folderID] && tree.folders.map(\.storedName) == ["2024"])
    #expect(tree.files.map(\.id) == [doneID] && tree.files.map(\.path) == ["2024/a.txt"] && tree.files.map(\.size) == [5])
    #expect(tree.partials.count == 1)
    let partial = try #require(tree.partials.first)
    #expect(partial.checkpoint == PartialCheckpoint(senderKey: sender, id: partID, name: "photos/2024/b.bin", size: UInt64(big.count),
                                                    durable: 1_000, prefixHash: hash(Array(big.prefix(1_000)))))

    // The sender resumes the file from its checkpoint, then ends the folder.
    var hasher = partial.hasher
    try partial.file.write(Array(big[1_000...]), at: 1_000)
    hasher.update(Array(big[1_000...]))
    #expect(hasher.finalize() == hash(big))
    #expect(try partial.file.commit() == "2024/b.bin")
    #expect(try tree.tree.commit() == "photos")

    #expect(try listing(dir) == ["photos"], "no staging folder or journal left")
    #expect(try listing(dir + "/photos") == ["2024"], "the file begun and never checkpointed is gone")
    #expect(try listing(dir + "/photos/2024") == ["a.txt", "b.bin"])
    #expect(FileManager.default.contents(atPath: dir + "/photos/2024/a.txt") == Data("hello".utf8))
    #expect(FileManager.default.contents(atPath: dir + "/photos/2024/b.bin") == Data(big))
    let mode = try FileManager.default.attributesOfItem(atPath: dir + "/photos/2024/b.bin")[.posixPermissions] as? Int
    #expect(mode == 0o755)
}

@Test func aKeptFolderWhoseDiskDisagreesWithItsJournalIsRemovedWhole() throws {
    for damage in ["finished file gone", "finished file cut", "made folder gone", "symlink inside", "journal damaged"] {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let staging = try leaveAFolderPartWay(in: dir)
        switch damage {
        case "finished file gone": try FileManager.default.removeItem(atPath: staging + "/2024/a.txt")
        case "finished file cut": try Data("hell".utf8).write(to: URL(fileURLWithPath: staging + "/2024/a.txt"))
        case "made folder gone": try FileManager.default.removeItem(atPath: staging + "/2024")
        case "symlink inside": try FileManager.default.createSymbolicLink(atPath: staging + "/link", withDestinationPath: "/etc")
        default:
            let journal = String(staging.dropLast(TemporaryNames.suffix.utf8.count)) + TemporaryNames.recordSuffix
            var bytes = try #require(FileManager.default.contents(atPath: journal))
            bytes[TreeJournal.magic.count + 5] ^= 1
            try bytes.write(to: URL(fileURLWithPath: journal))
        }
        let store = try keepingStore(dir)
        #expect(store.recoverPartials(makeHasher: { Blake() }).found.isEmpty, "\(damage)")
        let trees = store.recoverTrees(makeHasher: { Blake() })
        #expect(trees.found.isEmpty && trees.removed == 1, "\(damage): the receiver is told one folder went")
        let left = try listing(dir)
        #expect(left.isEmpty, "\(damage): left \(left)")
    }
}

@Test func aKeptFolderWithAPrefixThatNoLongerHashesResumesThatFileFromTheStart() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let staging = try leaveAFolderPartWay(in: dir)
    let handle = try #require(FileHandle(forUpdatingAtPath: staging + "/2024/b.bin"))
    try handle.seek(toOffset: 10)
    handle.write(Data([0xFF]))
    try handle.close()

    let trees = try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found
    let tree = try #require(trees.first)
    #expect(tree.partials.isEmpty)
    #expect(tree.files.map(\.path) == ["2024/a.txt"])
    #expect(try listing(staging + "/2024") == ["a.txt"], "the damaged file is removed: its re-offer starts it afresh")
    let again = try tree.tree.beginFile(["2024", "b.bin"], id: partID, size: UInt64(big.count), executable: true)
    try again.write(big, at: 0)
    #expect(try again.commit() == "2024/b.bin")
    #expect(try tree.tree.commit() == "photos")
    #expect(FileManager.default.contents(atPath: dir + "/photos/2024/b.bin") == Data(big))
}

@Test func aJournalWithoutItsFolderIsRemovedAndAStoreThatKeepsNothingLeavesNoJournal() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let staging = try leaveAFolderPartWay(in: dir)
    try FileManager.default.removeItem(atPath: staging)
    #expect(try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found.isEmpty)
    #expect(try listing(dir).isEmpty)

    let tree = try testStore(dir).beginTree(topName: "t")
    #expect(try listing(dir).count == 1, "only the staging folder: no journal")
    tree.closeForResume()
    #expect(try listing(dir).isEmpty, "a folder not kept across runs is removed when the receiver stops")
}

/// The journal of the folder `leaveAFolderPartWay` left in `dir`, with `records` appended as a
/// receiver would have appended them (saved at `savedAt`, default now).
private func appendToJournal(in dir: String, _ records: [TreeRecord], savedAt: UInt64 = UInt64(Date().timeIntervalSince1970)) throws -> String {
    let name = try #require(try listing(dir).first { $0.hasSuffix(TemporaryNames.recordSuffix) })
    let handle = try #require(FileHandle(forWritingAtPath: dir + "/" + name))
    handle.seekToEndOfFile()
    handle.write(Data(records.flatMap { RecordFrame.frame(TreeJournal.encode($0, savedAt: savedAt)) }))
    try handle.close()
    return dir + "/" + name
}

/// Issue 32: a trusted sender's folder of 10^5 paths left a journal that start-up read whole, an
/// OOM crash loop under the unit's MemoryMax. Now the fold stops past `TreeJournal.maxPaths`, and
/// the folder and its journal are removed.
@Test func aFolderOfAHundredThousandPathsIsRemovedAtStartNotHeldInMemory() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try leaveAFolderPartWay(in: dir)
    let path = String(repeating: "p", count: 200)
    _ = try appendToJournal(in: dir, (0..<100_000).map { .folder(id: TransferID(halves: (9, UInt64($0))), path: ["2024", "\(path)\($0)"]) })
    let store = try keepingStore(dir)
    #expect(store.recoverPartials(makeHasher: { Blake() }).found.isEmpty)
    let trees = store.recoverTrees(makeHasher: { Blake() })
    #expect(trees.found.isEmpty && trees.removed == 1)
    #expect(try listing(dir).isEmpty)
}

/// Issue 32: a folder's journal grew with every path at receive time, with no bound, and a
/// journal past `TreeJournal.maxPaths` is removed unread at start. Now a folder that passes the
/// bound is received on but no longer kept: its journal goes at once, and a stop removes its
/// staging folder. (The bound is 3 here; the receiver's is `TreeJournal.maxPaths`.)
@Test func aFolderPastThePathBoundIsReceivedButNoLongerKept() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try keepingStore(dir)
    store.maxKeptFolderPaths = 3
    let tree = try store.beginTree(topName: "photos", origin: origin)
    try tree.makeFolder(["2024"], id: folderID)
    let first = try tree.beginFile(["2024", "a.txt"], id: doneID, size: 5, executable: false)
    try first.write(Array("hello".utf8), at: 0)
    #expect(try first.commit() == "2024/a.txt")
    try tree.makeFolder(["2025"], id: TransferID(halves: (5, 5)))
    #expect(try listing(dir).filter { $0.hasSuffix(TemporaryNames.recordSuffix) }.count == 1, "three paths: kept")
    let part = try tree.beginFile(["2025", "b.bin"], id: partID, size: UInt64(big.count), executable: false)
    try part.write(Array(big.prefix(1_000)), at: 0)
    #expect(try listing(dir).filter { $0.hasSuffix(TemporaryNames.recordSuffix) }.isEmpty, "the fourth path: the journal is gone")
    try part.checkpoint(PartialCheckpoint(senderKey: sender, id: partID, name: "photos/2025/b.bin", size: UInt64(big.count),
                                          durable: 1_000, prefixHash: hash(Array(big.prefix(1_000)))))
    part.closeForResume()
    tree.closeForResume()
    #expect(try listing(dir).isEmpty, "a stop removes a folder no longer kept")
    #expect(try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found.isEmpty)
}

/// A journal that only grew (a checkpoint every 256 KiB of each file) is written anew at start
/// with the last word on each path, and the folder is taken up as before.
@Test func aKeptFolderJournalIsCompactedAtStart() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try leaveAFolderPartWay(in: dir)
    let again = TreeRecord.checkpoint(id: partID, path: ["2024", "b.bin"], size: UInt64(big.count), executable: true, durable: 1_000,
                                      prefixHash: hash(Array(big.prefix(1_000))))
    let journal = try appendToJournal(in: dir, Array(repeating: again, count: 1_000))
    let grown = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
    let trees = try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found
    #expect(trees.count == 1 && trees.first?.partials.first?.checkpoint.durable == 1_000)
    let compacted = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
    #expect(compacted < grown / 100, "\(grown) -> \(compacted) bytes")
}

/// A folder kept by a run that saved it 20 minutes ago is found with that age, and so are its
/// files part-way: the receiver keeps them for what is left of `--keep-partials` (issue 32).
@Test func aRecoveredFolderKnowsHowLongItHasWaited() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let name = TemporaryNames.record(for: (try leaveAFolderPartWay(in: dir) as NSString).lastPathComponent)
    let now = UInt64(Date().timeIntervalSince1970)
    let store = try keepingStore(dir)
    let parsed = try #require(try TreeJournal.read(in: store, name: name))
    try parsed.journal.compact(parsed.contents, now: now - 1_200)   // every record stamped 20 minutes ago
    parsed.journal.close()
    let trees = try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found
    let age = try #require(trees.first?.age)
    #expect(age >= .seconds(1_200) && age <= .seconds(1_260), "\(age)")
    #expect(trees.first?.partials.map(\.age) == [age])
}

/// A journal saved in the future (a clock set back) is kept, and its time is written as now, so
/// that it expires `--keep-partials` after this start rather than never.
@Test func aFolderSavedInTheFutureIsKeptAndItsTimeWrittenAsNow() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try leaveAFolderPartWay(in: dir)
    let now = UInt64(Date().timeIntervalSince1970)
    let journal = try appendToJournal(in: dir, [.folder(id: TransferID(halves: (9, 9)), path: ["later"])], savedAt: now + 10 * 365 * 86_400)
    try FileManager.default.createDirectory(atPath: String(journal.dropLast(TemporaryNames.recordSuffix.utf8.count)) + TemporaryNames.suffix + "/later",
                                            withIntermediateDirectories: false)
    let store = try keepingStore(dir)
    let trees = store.recoverTrees(makeHasher: { Blake() }).found   // (held: a tree let go is discarded)
    #expect(trees.count == 1)
    #expect(trees.first?.age == .zero && trees.first?.partials.allSatisfy { $0.age == .zero } == true)
    let savedAt = try #require(try TreeJournal.read(in: store, name: (journal as NSString).lastPathComponent)).contents.savedAt
    #expect(savedAt >= now && savedAt <= now + 60, "\(savedAt) against \(now)")
}

/// Issue 32: the receiver's pump begins files and makes folders in a folder while a connection's
/// storage worker commits files of it. The folder takes one caller at a time: every file and
/// folder is in its journal, whole, and the folder is counted right (it commits).
@Test func aFolderTakesThePumpAndAStorageWorkerAtOnce() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let count = 150
    do {
        let store = try keepingStore(dir)
        let tree = try store.beginTree(topName: "photos", origin: origin)
        let worker = DispatchQueue(label: "test.storage")
        let failures = Mutex<[String]>([])
        for n in 0..<count {
            try tree.makeFolder(["d\(n)"], id: TransferID(halves: (9, UInt64(n))))
            let file = try tree.beginFile(["d\(n)", "f"], id: TransferID(halves: (8, UInt64(n))), size: 1, executable: false)
            try file.write([UInt8(truncatingIfNeeded: n)], at: 0)
            let handed = Handed(file)
            worker.async {
                do { _ = try handed.file.commit() } catch { failures.withLock { $0.append("\(error)") } }
            }
        }
        worker.sync {}
        #expect(failures.withLock { $0 }.isEmpty)
        tree.closeForResume()
    }
    let trees = try keepingStore(dir).recoverTrees(makeHasher: { Blake() }).found
    let tree = try #require(trees.first)
    #expect(tree.files.count == count && tree.folders.count == count && tree.partials.isEmpty)
    #expect(try tree.tree.commit() == "photos")
    #expect(try listing(dir + "/photos").count == count)
}

/// A file handed to another thread, as `StorageWork` hands it (nobody else touches it meanwhile).
private struct Handed: @unchecked Sendable {
    let file: any IncomingFile
    init(_ file: any IncomingFile) { self.file = file }
}
