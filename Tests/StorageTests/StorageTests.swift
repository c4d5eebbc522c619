import Foundation
import Testing
import Transfer
@testable import Storage
import Pipeline

func scratchDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "blesend-storage-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

/// A store on `dir` as a receiver with the tag `tag` and the umask `umask` would have.
func testStore(_ dir: String, overwrite: Bool = false, umask: mode_t = 0o022, tag: String = "test") throws -> DirectoryFileStore {
    try DirectoryFileStore(directory: dir, overwrite: overwrite, modes: FileModes(umask: umask), temporaryTag: tag)
}

func listing(_ dir: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
}

@Test func committedFilesAppearOnlyAtCommitAndNeverOverwrite() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir)
    try "old".write(toFile: dir + "/report.pdf", atomically: false, encoding: .utf8)

    let file = try store.begin(name: "report.pdf", size: 6, sender: "alice")
    try file.write(Array("abc".utf8), at: 0)
    try file.write(Array("def".utf8), at: 3)
    // While receiving, the file has no name at all: only the old file is there.
    #expect(try listing(dir) == ["report.pdf"])

    let stored = try file.commit()
    #expect(stored == "report-1.pdf")
    #expect(try String(contentsOfFile: dir + "/report.pdf", encoding: .utf8) == "old")
    #expect(try String(contentsOfFile: dir + "/report-1.pdf", encoding: .utf8) == "abcdef")
    #expect(try listing(dir) == ["report-1.pdf", "report.pdf"])
}

@Test func overwriteReplacesWhenAskedTo() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try "old".write(toFile: dir + "/a.txt", atomically: false, encoding: .utf8)
    let file = try testStore(dir, overwrite: true).begin(name: "a.txt", size: nil, sender: "x")
    try file.write([0x6E, 0x65, 0x77], at: 0)
    #expect(try file.commit() == "a.txt")
    #expect(try String(contentsOfFile: dir + "/a.txt", encoding: .utf8) == "new")
}

@Test func discardLeavesNothing() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let file = try testStore(dir).begin(name: "x", size: nil, sender: "x")
    try file.write([1, 2, 3], at: 0)
    file.discard()
    file.discard()
    #expect(try listing(dir).isEmpty)
}

@Test func staleTemporariesAreRemovedAndOthersKept() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try "x".write(toFile: dir + "/.old.ABC123.blesend-part", atomically: false, encoding: .utf8)
    try "x".write(toFile: dir + "/keep.txt", atomically: false, encoding: .utf8)
    #expect(try testStore(dir).removeStaleTemporaries() == 0, "another scheme's name is not ours")
    try "x".write(toFile: dir + "/.new.test-ABC123.blesend-part", atomically: false, encoding: .utf8)
    #expect(try testStore(dir).removeStaleTemporaries() == 1)
    #expect(try listing(dir) == [".old.ABC123.blesend-part", "keep.txt"])
}

@Test func numberedNames() {
    #expect(DirectoryFileStore.numbered("report.pdf", 2) == "report-2.pdf")
    #expect(DirectoryFileStore.numbered("archive", 1) == "archive-1")
    #expect(DirectoryFileStore.numbered("a.tar.gz", 1) == "a.tar-1.gz")
}

@Test func unwritableOrMissingDirectoriesAreReported() throws {
    #expect(throws: StorageError.self) { try testStore("/nonexistent-blesend") }
}

@Test func anAbsurdSizeIsRefusedUpFront() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    #expect(throws: StorageError.self) { try testStore(dir).begin(name: "huge", size: 1 << 62, sender: "x") }
    #expect(try listing(dir).isEmpty)
}

@Test func localFilesAndStreamsReadBack() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
    _ = FileManager.default.createFile(atPath: dir + "/f", contents: Data(bytes))
    let source = try LocalFileSource(path: dir + "/f")
    #expect(source.size == 10_000)
    #expect(source.name == "f")
    #expect(try source.read(at: 9_990, count: 100) == Array(bytes[9_990...]))
    #expect(try source.read(at: 20_000, count: 10).isEmpty)
    #expect(throws: StorageError.self) { try LocalFileSource(path: dir) }

    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: dir + "/f"))
    let stream = StreamSource(fd: handle.fileDescriptor, name: "s")
    #expect(try stream.read(at: 0, count: 4096) == Array(bytes[0..<4096]))
    #expect(try stream.read(at: 4096, count: 8192) == Array(bytes[4096..<10_000]))
    stream.release(before: 4096)
    #expect(try stream.read(at: 5000, count: 10) == Array(bytes[5000..<5010]))
    #expect(throws: StorageError.self) { try stream.read(at: 100, count: 10) }
    try handle.close()
}

/// The reserve: an offer that would eat into it is refused; a stream (or a file growing past what
/// the disk had) is stopped once the free space is down to it; the default is 5 %, at most 1 GiB.
@Test func theDiskReserveRefusesOffersAndStopsStreamsThatWouldEatIntoIt() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir)
    let disk = ShrinkingFileSystem(under: store, free: 30 << 20)
    #expect(DiskReserve().keep(ofTotal: 100 << 20) == 5 << 20)
    #expect(DiskReserve().keep(ofTotal: 1 << 40) == 1 << 30)
    store.reserve = DiskReserve(bytes: 20 << 20)
    #expect(throws: StorageError(.noSpace, "")) { _ = try store.begin(name: "big.bin", size: 11 << 20, sender: "alice") }
    let fits = try store.begin(name: "fits.bin", size: 9 << 20, sender: "alice")
    fits.discard()

    let stream = try store.begin(name: "stream.bin", size: nil, sender: "alice")
    // Stopped within one check interval (1 MiB) of reaching the reserve.
    let written = disk.writeUntilStopped(stream)
    #expect(written >= 10 << 20 && written <= 11 << 20, "stopped after \(written) bytes")
    stream.discard()
}

/// A file system of 100 MiB in 4 KiB blocks under `store`, whose free space shrinks as a test
/// writes (`writeUntilStopped`).
final class ShrinkingFileSystem {
    private(set) var free: UInt64

    init(under store: DirectoryFileStore, free: UInt64) {
        self.free = free
        store.fileSystemStatus = { [unowned self] _, status in
            status.pointee = statvfs()
            status.pointee.f_frsize = 4_096
            status.pointee.f_blocks = (100 << 20) / 4_096
            status.pointee.f_bavail = UInt(self.free / 4_096)
            return 0
        }
    }

    /// Writes 64 KiB at a time to `file` until the store stops it for the reserve (at most
    /// 40 MiB); the bytes written.
    func writeUntilStopped(_ file: any IncomingFile) -> Int {
        var written = 0
        let chunk = [UInt8](repeating: 7, count: 65_536)
        do {
            while written < 40 << 20 {
                try file.write(chunk, at: UInt64(written))
                written += chunk.count
                free -= UInt64(chunk.count)
            }
            Issue.record("the file was never stopped")
        } catch let error as StorageError {
            #expect(error.code == .noSpace && error.detail.contains("--reserve"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
        return written
    }
}

/// Trees as the storage tests build them: the ids a store keeping folders across runs records
/// do not matter to these tests, so they are fixed.
extension DirectoryFileStore {
    func beginTree(topName: String) throws(StorageError) -> DirectoryIncomingTree {
        try beginTree(topName: topName, origin: TreeOrigin(senderKey: [UInt8](repeating: 1, count: 32), tree: TransferID(halves: (9, 9)),
                                                           folder: TransferID(halves: (9, 8)), top: Array(topName.utf8)))
    }
}

extension DirectoryIncomingTree {
    func makeFolder(_ components: [String]) throws(StorageError) {
        try makeFolder(components, id: TransferID(halves: (UInt64(components.count), 1)))
    }

    func beginFile(_ components: [String], size: UInt64?, executable: Bool) throws(StorageError) -> any IncomingFile {
        try beginFile(components, id: TransferID(halves: (UInt64(components.count), 2)), size: size, executable: executable)
    }
}

/// Issue 32: files inside a folder skipped `--reserve`, at the offer and while writing. Now a
/// folder is refused when the reserve is not free, a file in it whose size would eat into the
/// reserve is refused, and one growing past it is stopped, as a lone file is.
@Test func theDiskReserveHoldsInsideAFolder() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir)
    let disk = ShrinkingFileSystem(under: store, free: 30 << 20)
    store.reserve = DiskReserve(bytes: 40 << 20)
    #expect(throws: StorageError(.noSpace, "")) { _ = try store.beginTree(topName: "photos") }
    store.reserve = DiskReserve(bytes: 20 << 20)
    let tree = try store.beginTree(topName: "photos")
    #expect(throws: StorageError(.noSpace, "")) { _ = try tree.beginFile(["big.bin"], id: TransferID(halves: (1, 1)), size: 11 << 20, executable: false) }
    let stream = try tree.beginFile(["stream.bin"], id: TransferID(halves: (1, 2)), size: nil, executable: false)
    let written = disk.writeUntilStopped(stream)
    #expect(written >= 10 << 20 && written <= 11 << 20, "stopped after \(written) bytes")
    stream.discard()
    tree.discard()
}
