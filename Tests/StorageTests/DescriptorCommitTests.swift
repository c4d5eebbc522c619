import Foundation
import Testing
import Transfer
@testable import Storage
import Pipeline

/// Issue 20: files are committed by descriptor, not by a name someone else could swap; stored
/// modes follow the umask; a receiver removes only its own leftovers; an output folder others
/// may write is refused.

private func permissions(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

private func receive(_ store: DirectoryFileStore, _ name: String, _ text: String) throws -> String {
    let file = try store.begin(name: name, size: UInt64(text.utf8.count), sender: "x")
    try file.write(Array(text.utf8), at: 0)
    return try file.commit()
}

@Test func aFileBeingReceivedHasNoNameThatCouldBeSwapped() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir)
    let file = try store.begin(name: "report.pdf", size: nil, sender: "x")
    try file.write(Array("mine".utf8), at: 0)
    // Nothing in the folder to rename, replace or link: the data is reachable only through the
    // receiver's descriptor until commit gives it its name.
    #expect(try listing(dir).isEmpty)
    #expect(try file.commit() == "report.pdf")
    #expect(try String(contentsOfFile: dir + "/report.pdf", encoding: .utf8) == "mine")
    #expect(try listing(dir) == ["report.pdf"])
}

@Test func withoutAnEmptyPathLinkTheProcLinkCommits() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    for overwrite in [false, true] {
        let store = try testStore(dir, overwrite: overwrite)
        // What an unprivileged process gets from linkat(fd, "", …, AT_EMPTY_PATH) on most kernels.
        store.linkByEmptyPath = { _, _, _ in errno = ENOENT; return -1 }
        #expect(try receive(store, "a.txt", "text \(overwrite)") == "a.txt")
        #expect(try String(contentsOfFile: dir + "/a.txt", encoding: .utf8) == "text \(overwrite)")
    }
    #expect(try listing(dir) == ["a.txt"])
}

@Test("a named temporary swapped before commit is never stored", arguments: [false, true])
func aSwappedNamedTemporaryIsNotCommitted(overwrite: Bool) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir, overwrite: overwrite)
    store.unnamedFiles = false   // as on a file system without O_TMPFILE
    let file = try store.begin(name: "report.pdf", size: nil, sender: "x")
    try file.write(Array("mine".utf8), at: 0)
    let temporary = try #require(try listing(dir).first)
    #expect(temporary.hasPrefix(".report.pdf.test-") && temporary.hasSuffix(DirectoryFileStore.temporarySuffix))
    #expect(try permissions(dir + "/" + temporary) == 0o600)
    // Someone who can write the folder puts their own file under the temporary's name.
    try "theirs".write(toFile: dir + "/planted", atomically: false, encoding: .utf8)
    #expect(rename(dir + "/planted", dir + "/" + temporary) == 0)

    #expect { try file.commit() } throws: { error in
        (error as? StorageError)?.code == .io && (error as? StorageError)?.detail.contains("replaced") == true
    }
    #expect(!FileManager.default.fileExists(atPath: dir + "/report.pdf"), "their file was not stored under the name")
    #expect(try listing(dir).isEmpty)
}

@Test func aNamedTemporaryThatStaysPutIsCommitted() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try "old".write(toFile: dir + "/report.pdf", atomically: false, encoding: .utf8)
    let store = try testStore(dir)
    store.unnamedFiles = false
    #expect(try receive(store, "report.pdf", "new") == "report-1.pdf")
    #expect(try listing(dir) == ["report-1.pdf", "report.pdf"])
    #expect(try String(contentsOfFile: dir + "/report.pdf", encoding: .utf8) == "old")
}

@Test("stored files and folders follow the receiver's umask",
      arguments: [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700), (0o002, 0o664, 0o775), (0o027, 0o640, 0o750)])
func storedModesFollowTheUmask(umask: Int, file: Int, executable: Int) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try testStore(dir, umask: mode_t(umask))
    _ = try receive(store, "single.txt", "x")
    #expect(try permissions(dir + "/single.txt") == file)

    let tree = try store.beginTree(topName: "t")
    for (name, isExecutable) in [("plain", false), ("run.sh", true)] {
        let entry = try tree.beginFile(["sub", name], size: 1, executable: isExecutable)
        try entry.write([0x41], at: 0)
        _ = try entry.commit()
    }
    #expect(try tree.commit() == "t")
    #expect(try permissions(dir + "/t/sub/plain") == file)
    #expect(try permissions(dir + "/t/sub/run.sh") == executable, "executable only because the sender said so")
    #expect(try permissions(dir + "/t") == executable)
    #expect(try permissions(dir + "/t/sub") == executable)
}

@Test func theUmaskIsReadAndLeftAsItWas() {
    let before = umask(0o027)
    defer { umask(before) }
    #expect(FileModes.current().umask == 0o027)
    #expect(FileModes.current().file == 0o640)
    #expect(umask(0o027) == 0o027, "reading it set it back")
}

@Test func startUpRemovesOnlyThisReceiversLeftovers() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let foreign = [
        ".x.blesend-part",                         // no scheme at all
        ".old.ABC123.blesend-part",                // blesend 0.4.0's scheme, whoever made it
        ".report.pdf.0a1b2c3d4e5f-ABC123.blesend-part",  // another receiver's tag
        ".report.pdf.mine-ABC12.blesend-part",     // our tag, but not a name we make
        "mine-ABC123.blesend-part",                // not hidden
    ]
    for name in foreign { try "x".write(toFile: dir + "/" + name, atomically: false, encoding: .utf8) }
    try FileManager.default.createDirectory(atPath: dir + "/.photos.mine-Zz9Yy8.blesend-part/a", withIntermediateDirectories: true)
    try "x".write(toFile: dir + "/.report.pdf.mine-ABC123.blesend-part", atomically: false, encoding: .utf8)

    #expect(try testStore(dir, tag: "mine").removeStaleTemporaries() == 2)
    #expect(try listing(dir) == foreign.sorted())

    // One with our name that another user owns is theirs: left alone (needs root to hand it over).
    if geteuid() == 0 {
        let theirs = dir + "/.secret.mine-QQQQQQ.blesend-part"
        try "x".write(toFile: theirs, atomically: false, encoding: .utf8)
        chown(theirs, 4242, 4242)
        #expect(try testStore(dir, tag: "mine").removeStaleTemporaries() == 0)
        #expect(FileManager.default.fileExists(atPath: theirs))
    }
}

@Test func anOutputFolderOthersMayWriteIsRefused() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let me = geteuid(), someoneElse = geteuid() &+ 4242
    func code(_ mode: Int, as euid: uid_t) throws -> OutputFolderError.Code? {
        chmod(dir, mode_t(mode))
        let store = try testStore(dir)
        do {
            try store.checkOnlyOwnerWrites(euid: euid)
            return nil
        } catch {
            return error.code
        }
    }
    // Only the owner writes: fine, whoever runs the receiver.
    #expect(try code(0o755, as: me) == nil)
    #expect(try code(0o700, as: someoneElse) == nil)
    // Ours and our group's (user private groups), or sticky and ours: fine.
    #expect(try code(0o775, as: me) == nil)
    #expect(try code(0o1777, as: me) == nil)
    // World-writable without the sticky bit: anyone may rename what we store.
    #expect(try code(0o777, as: me) == .writableByOthers)
    #expect(try code(0o757, as: me) == .writableByOthers)
    // Someone else's, and their group or everyone may write it (sticky or not).
    #expect(try code(0o775, as: someoneElse) == .writableByOthers)
    #expect(try code(0o1777, as: someoneElse) == .writableByOthers)
    chmod(dir, 0o755)

    // A symlink given as the output folder is refused rather than followed.
    let link = dir + "-link"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir)
    defer { unlink(link) }
    #expect { try testStore(link) } throws: { ($0 as? StorageError)?.detail.contains("symlink") == true }
}

@Test func theHeldFolderIsUsedEvenIfItsPathMoves() throws {
    let dir = try scratchDirectory()
    let moved = dir + "-moved"
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: moved)
    }
    let store = try testStore(dir)
    let file = try store.begin(name: "f", size: nil, sender: "x")
    try file.write([0x41], at: 0)
    // The folder is renamed and another put at its path: the file still lands in the folder the
    // receiver opened, not in whatever the path now names.
    #expect(rename(dir, moved) == 0)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
    #expect(try file.commit() == "f")
    #expect(try listing(moved) == ["f"])
    #expect(try listing(dir).isEmpty)
}
