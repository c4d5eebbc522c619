import Foundation
import Testing
import Transfer
@testable import Storage
import Pipeline

/// The one hidden staging folder in `dir`.
private func stagingFolder(_ dir: String) throws -> String {
    let hidden = try listing(dir).filter { $0.hasPrefix(".") && $0.hasSuffix(DirectoryFileStore.temporarySuffix) }
    #expect(hidden.count == 1)
    return dir + "/" + (try #require(hidden.first))
}

private func permissions(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

private func store(_ tree: DirectoryIncomingTree, _ components: [String], _ text: String, executable: Bool = false) throws -> String {
    let file = try tree.beginFile(components, size: UInt64(text.utf8.count), executable: executable)
    try file.write(Array(text.utf8), at: 0)
    return try file.commit()
}

private func storageCode(_ body: () throws -> Void) -> StorageError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? StorageError)?.code
    }
}

@Test func aTreeAppearsWholeAndOnlyAtCommit() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let tree = try testStore(dir).beginTree(topName: "photos")
    let staging = try stagingFolder(dir)
    #expect(try permissions(staging) == 0o700)

    try tree.makeFolder(["empty"])
    try tree.makeFolder(["a"])
    let deep = (1..<TransferConstants.maxPathDepth).map { "d\($0)" }  // 31 below the top: 32 in all
    #expect(try store(tree, deep, "deep") == deep.joined(separator: "/"))
    #expect(try store(tree, ["a", "caf\u{E9}"], "nfc") == "a/caf\u{E9}")
    #expect(try store(tree, ["a", "cafe\u{301}"], "nfd") == "a/cafe\u{301}")
    #expect(try store(tree, ["a", "日本語.txt"], "ja") == "a/日本語.txt")
    #expect(try store(tree, ["run.sh"], "#!/bin/sh\n", executable: true) == "run.sh")
    #expect(try store(tree, ["a", "empty-file"], "") == "a/empty-file")

    // Nothing but the hidden staging folder while receiving.
    #expect(try listing(dir).allSatisfy { $0.hasPrefix(".") })
    #expect(try tree.commit() == "photos")
    #expect(try listing(dir) == ["photos"])

    let top = dir + "/photos"
    #expect(try listing(top) == ["a", "d1", "empty", "run.sh"])
    #expect(try listing(top + "/empty").isEmpty)
    // Both normal forms are there, as two files (compared by bytes, not as Swift strings).
    let names = try FileManager.default.contentsOfDirectory(atPath: top + "/a").map { Array($0.utf8) }
    #expect(names.contains(Array("caf\u{E9}".utf8)) && names.contains(Array("cafe\u{301}".utf8)) && names.count == 4)
    #expect(try String(contentsOfFile: top + "/" + deep.joined(separator: "/"), encoding: .utf8) == "deep")
    #expect(try String(contentsOfFile: top + "/a/日本語.txt", encoding: .utf8) == "ja")
    #expect(try permissions(top) == 0o755)
    #expect(try permissions(top + "/empty") == 0o755)
    #expect(try permissions(top + "/" + deep.dropLast().joined(separator: "/")) == 0o755)
    #expect(try permissions(top + "/run.sh") == 0o755)
    #expect(try permissions(top + "/a/日本語.txt") == 0o644)
    #expect(storageCode { _ = try tree.commit() } == .io)
}

@Test func everyPathIsCreatedOnce() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let tree = try testStore(dir).beginTree(topName: "t")

    // Two wire paths that reduce to the same path: the first wins, the second is refused.
    let first = try RelativePath(wire: Array("t/.notes/todo.txt".utf8)).components.dropFirst()
    let second = try RelativePath(wire: Array("t/notes/ todo.txt".utf8)).components.dropFirst()
    #expect(try store(tree, Array(first), "first") == "notes/todo.txt")
    #expect(storageCode { _ = try store(tree, Array(second), "second") } == .exists)

    // The same folder twice, and a folder made on demand that arrives later (fine).
    try tree.makeFolder(["d"])
    #expect(storageCode { try tree.makeFolder(["d"]) } == .exists)
    try tree.makeFolder(["notes"])
    #expect(storageCode { try tree.makeFolder(["notes"]) } == .exists)

    // A file where a folder is, a folder where a file is, a file below a file.
    #expect(storageCode { _ = try store(tree, ["d"], "x") } == .exists)
    _ = try store(tree, ["f"], "file")
    #expect(storageCode { try tree.makeFolder(["f"]) } == .exists)
    #expect(storageCode { _ = try store(tree, ["f", "g"], "x") } == .exists)

    // A discarded file frees its path.
    let dropped = try tree.beginFile(["again"], size: nil, executable: false)
    dropped.discard()
    dropped.discard()
    #expect(try store(tree, ["again"], "kept") == "again")

    #expect(try tree.commit() == "t")
    #expect(try listing(dir + "/t") == ["again", "d", "f", "notes"])
    #expect(try String(contentsOfFile: dir + "/t/notes/todo.txt", encoding: .utf8) == "first")
}

@Test func unsafeComponentsAreRefusedAtTheStorageEdge() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    #expect(storageCode { _ = try testStore(dir).beginTree(topName: "..") } == .io)
    #expect(storageCode { _ = try testStore(dir).beginTree(topName: "a/b") } == .io)
    let tree = try testStore(dir).beginTree(topName: "t")
    for components in [["..", "x"], ["a/b"], ["", "x"], ["."], ["nul\u{0}"], []] {
        #expect(storageCode { _ = try tree.beginFile(components, size: nil, executable: false) } == .io)
    }
    #expect(storageCode { try tree.makeFolder(["..", "x"]) } == .io)
    #expect(storageCode { try tree.makeFolder(Array(repeating: "d", count: 33)) } == .io)
    try tree.makeFolder([])  // the top folder itself: already there
    tree.discard()
    #expect(try listing(dir).isEmpty)
}

@Test func aTakenTopNameGetsANumber() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try "a file".write(toFile: dir + "/photos", atomically: false, encoding: .utf8)
    try FileManager.default.createDirectory(atPath: dir + "/photos-1", withIntermediateDirectories: false)
    try "old".write(toFile: dir + "/photos-1/x", atomically: false, encoding: .utf8)
    let output = try testStore(dir, overwrite: true)  // folders are never replaced anyway

    let tree = try output.beginTree(topName: "photos")
    _ = try store(tree, ["x"], "new")
    #expect(try tree.commit() == "photos-2")
    #expect(try String(contentsOfFile: dir + "/photos", encoding: .utf8) == "a file")
    #expect(try String(contentsOfFile: dir + "/photos-1/x", encoding: .utf8) == "old")
    #expect(try String(contentsOfFile: dir + "/photos-2/x", encoding: .utf8) == "new")

    let dotted = try output.beginTree(topName: "photos-2")
    #expect(try dotted.commit() == "photos-2-1")
    #expect(try listing(dir) == ["photos", "photos-1", "photos-2", "photos-2-1"])
}

@Test func discardLeavesNothingAndSoDoesForgetting() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let tree = try testStore(dir).beginTree(topName: "t")
    try tree.makeFolder(["a", "b", "c"])
    _ = try store(tree, ["a", "b", "f"], "x")
    let open = try tree.beginFile(["a", "open"], size: nil, executable: false)
    try open.write([1, 2, 3], at: 0)
    #expect(storageCode { _ = try tree.commit() } == .io)  // a file is still arriving
    tree.discard()
    tree.discard()
    #expect(try listing(dir).isEmpty)
    open.discard()
    #expect(storageCode { try open.write([4], at: 3) } == .io)
    #expect(storageCode { _ = try tree.beginFile(["late"], size: nil, executable: false) } == .io)

    do {
        let forgotten = try testStore(dir).beginTree(topName: "u")
        _ = try store(forgotten, ["x"], "x")
    }
    #expect(try listing(dir).isEmpty)
}

@Test func anAbsurdSizeIsRefusedInATreeToo() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let tree = try testStore(dir).beginTree(topName: "t")
    #expect(storageCode { _ = try tree.beginFile(["huge"], size: 1 << 62, executable: false) } == .noSpace)
    #expect(try listing(try stagingFolder(dir)).isEmpty)
}

@Test func aSymlinkPlantedInTheStagingFolderIsNotFollowed() throws {
    let dir = try scratchDirectory()
    let outside = try scratchDirectory()
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: outside)
    }
    try "keep".write(toFile: outside + "/sentinel", atomically: false, encoding: .utf8)
    let tree = try testStore(dir).beginTree(topName: "t")
    try tree.makeFolder(["sub"])
    let staging = try stagingFolder(dir)

    // Between two calls, the folder becomes a symlink to a folder outside, and another name
    // a symlink to a file outside that does not exist yet.
    try FileManager.default.removeItem(atPath: staging + "/sub")
    try FileManager.default.createSymbolicLink(atPath: staging + "/sub", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(atPath: staging + "/link", withDestinationPath: outside + "/planted")

    #expect(storageCode { _ = try store(tree, ["sub", "x"], "escaped") } == .exists)
    #expect(storageCode { _ = try store(tree, ["sub", "deeper", "x"], "escaped") } == .exists)
    #expect(storageCode { _ = try store(tree, ["link"], "escaped") } == .exists)
    #expect(storageCode { try tree.makeFolder(["sub", "x"]) } == .exists)
    // Commit walks the folders again and refuses the one that is now a symlink.
    #expect(storageCode { _ = try tree.commit() } == .exists)
    tree.discard()

    #expect(try listing(outside) == ["sentinel"])
    #expect(try String(contentsOfFile: outside + "/sentinel", encoding: .utf8) == "keep")
    #expect(try listing(dir).isEmpty)
}

@Test func staleStagingFoldersAreRemovedWithoutFollowingSymlinks() throws {
    let dir = try scratchDirectory()
    let outside = try scratchDirectory()
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: outside)
    }
    try "keep".write(toFile: outside + "/sentinel", atomically: false, encoding: .utf8)
    let stale = dir + "/.photos.test-Ab12Cd.blesend-part"
    try FileManager.default.createDirectory(atPath: stale + "/a/b", withIntermediateDirectories: true)
    try "x".write(toFile: stale + "/a/b/f", atomically: false, encoding: .utf8)
    try FileManager.default.createSymbolicLink(atPath: stale + "/a/out", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(atPath: dir + "/.link.test-XYZ123.blesend-part", withDestinationPath: outside)
    try "x".write(toFile: dir + "/.old.test-ABC123.blesend-part", atomically: false, encoding: .utf8)
    try FileManager.default.createDirectory(atPath: dir + "/keep", withIntermediateDirectories: false)

    #expect(try testStore(dir).removeStaleTemporaries() == 3)
    #expect(try listing(dir) == ["keep"])
    #expect(try listing(outside) == ["sentinel"])
}

@Test func removeEntryTakesAPathToAFolderOrAFile() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try FileManager.default.createDirectory(atPath: dir + "/f/g", withIntermediateDirectories: true)
    try "x".write(toFile: dir + "/f/g/h", atomically: false, encoding: .utf8)
    try "x".write(toFile: dir + "/file", atomically: false, encoding: .utf8)
    #expect(removeEntry(atPath: dir + "/f/"))
    #expect(removeEntry(atPath: dir + "/file"))
    #expect(removeEntry(atPath: dir + "/missing"))
    #expect(try listing(dir).isEmpty)
}

@Test func whereRenameNoReplaceIsRefusedAnEmptyPlaceholderClaimsTheName() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(fd) }
    let unsupported: (Int32, String, Int32, String) -> Int32 = { _, _, _, _ in
        errno = EINVAL
        return -1
    }
    try FileManager.default.createDirectory(atPath: dir + "/.staged/sub", withIntermediateDirectories: true)
    try "x".write(toFile: dir + "/taken", atomically: false, encoding: .utf8)
    try FileManager.default.createDirectory(atPath: dir + "/empty-but-taken", withIntermediateDirectories: false)

    #expect(try !moveFolderWithoutReplacing(".staged", to: "taken", in: fd, renameNoReplace: unsupported))
    #expect(try !moveFolderWithoutReplacing(".staged", to: "empty-but-taken", in: fd, renameNoReplace: unsupported))
    #expect(try moveFolderWithoutReplacing(".staged", to: "placed", in: fd, renameNoReplace: unsupported))
    #expect(try listing(dir) == ["empty-but-taken", "placed", "taken"])
    #expect(try listing(dir + "/placed") == ["sub"])
    #expect(try String(contentsOfFile: dir + "/taken", encoding: .utf8) == "x")
    #expect(throws: StorageError.self) {
        try moveFolderWithoutReplacing(".missing", to: "other", in: fd, renameNoReplace: unsupported)
    }
    #expect(try listing(dir) == ["empty-but-taken", "placed", "taken"])
}
