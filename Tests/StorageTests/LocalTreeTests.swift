import Foundation
import Testing
import Transfer
@testable import Storage
import Pipeline

private func write(_ text: String, to path: String, mode: Int = 0o644) throws {
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}

private func mkdir(_ path: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
}

@Test func aFolderIsListedInOrderWithEmptyFoldersAndExecutableBits() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let top = dir + "/top"
    try mkdir(top + "/a/empty")
    try mkdir(top + "/c")
    try write("z", to: top + "/a/z.txt")
    try write("B", to: top + "/b.txt", mode: 0o700)
    try write("A", to: top + "/A.txt", mode: 0o610)  // group x only: still executable
    try write("a", to: top + "/a.txt", mode: 0o604)
    try write("hidden", to: top + "/.hidden")

    let tree = try LocalTree(listing: top + "/")
    #expect(tree.skipped.isEmpty)
    #expect(tree.entries.map(\.path) == [
        "top", "top/.hidden", "top/A.txt", "top/a", "top/a/empty", "top/a/z.txt", "top/a.txt", "top/b.txt", "top/c",
    ])
    let kinds = Dictionary(uniqueKeysWithValues: tree.entries.map { ($0.path, $0.kind) })
    #expect(kinds["top/a/empty"] == .folder)
    #expect(kinds["top/A.txt"] == .file(size: 1, executable: true))
    #expect(kinds["top/a.txt"] == .file(size: 1, executable: false))
    #expect(kinds["top/b.txt"] == .file(size: 1, executable: true))
    #expect(kinds["top/.hidden"] == .file(size: 6, executable: false))
    #expect(tree.entries.allSatisfy { $0.wirePath == Array($0.path.utf8) })

    // Files open only when asked for, named by their path.
    let entry = try #require(tree.entries.first { $0.path == "top/a/z.txt" })
    let source = try tree.openFile(entry)
    #expect(source.name == "top/a/z.txt")
    #expect(source.size == 1)
    #expect(try source.read(at: 0, count: 10) == Array("z".utf8))
    #expect(throws: StorageError.self) { try tree.openFile(tree.entries[0]) }
}

@Test func theTopNameComesFromTheRealPathWhenGivenAsDot() throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try mkdir(dir + "/named/inner")
    #expect(try LocalTree(listing: dir + "/named/inner/..").entries.map(\.path) == ["named", "named/inner"])
    #expect(try LocalTree(listing: dir + "/named/.").entries.first?.path == "named")
    #expect(throws: StorageError.self) { try LocalTree(listing: "/") }
    #expect(throws: StorageError.self) { try LocalTree(listing: dir + "/missing") }
    try write("x", to: dir + "/file")
    #expect(throws: StorageError.self) { try LocalTree(listing: dir + "/file") }
}

@Test func symlinksPipesSocketsAndBadNamesAreSkippedAndReported() throws {
    let dir = try scratchDirectory()
    let outside = try scratchDirectory()
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: outside)
    }
    try write("secret", to: outside + "/secret")
    let top = dir + "/top"
    try mkdir(top)
    try write("ok", to: top + "/ok")
    try FileManager.default.createSymbolicLink(atPath: top + "/to-file", withDestinationPath: outside + "/secret")
    try FileManager.default.createSymbolicLink(atPath: top + "/to-folder", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(atPath: top + "/dangling", withDestinationPath: outside + "/none")
    #expect(mkfifo(top + "/fifo", 0o600) == 0)
    let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socketFD) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let socketPath = Array((top + "/socket").utf8CString)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in socketPath.enumerated() where index < raw.count { raw[index] = UInt8(bitPattern: byte) }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0)
    try write("x", to: top + "/back\\slash")
    try write("x", to: top + "/bell\u{7}")
    try write("x", to: top + "/...")
    // A name that is not UTF-8 (Linux allows any bytes but `/` and NUL).
    let badName = Array((top + "/").utf8) + [0x66, 0xFF, 0x00]
    let badFD = badName.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644) } }
    #expect(badFD >= 0)
    close(badFD)
    // A chain deeper than MaxPathDepth: the folder at depth 32 is sent, what is in it is not.
    let chain = (2...TransferConstants.maxPathDepth).map { "d\($0)" }
    try mkdir(top + "/" + chain.joined(separator: "/") + "/too-deep/deeper")
    try write("x", to: top + "/" + chain.joined(separator: "/") + "/too-deep-file")

    let tree = try LocalTree(listing: top)
    #expect(tree.entries.map(\.path) == ["top"] + (1...chain.count).map { "top/" + chain.prefix($0).joined(separator: "/") } + ["top/ok"])
    let skipped = Dictionary(uniqueKeysWithValues: tree.skipped.map { ($0.path, $0.code) })
    let deepest = "top/" + chain.joined(separator: "/")
    #expect(skipped == [
        "top/to-file": "symlink",
        "top/to-folder": "symlink",
        "top/dangling": "symlink",
        "top/fifo": "fifo",
        "top/socket": "socket",
        "top/back\\slash": "badPath.separator",
        "top/bell\u{7}": "badPath.controlCharacter",
        "top/...": "badPath.unusableComponent",
        "top/f\u{FFFD}": "badPath.notUTF8",
        deepest + "/too-deep": "badPath.tooDeep",
        deepest + "/too-deep-file": "badPath.tooDeep",
    ])
    #expect(tree.skipped.first { $0.code == "symlink" }.map { "\($0)" }?.contains("not followed") == true)
}

@Test func aFolderSwappedForASymlinkAfterTheListingIsNotFollowed() throws {
    let dir = try scratchDirectory()
    let outside = try scratchDirectory()
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: outside)
    }
    try mkdir(dir + "/top/sub")
    try write("mine", to: dir + "/top/sub/f")
    try write("secret", to: outside + "/f")
    let tree = try LocalTree(listing: dir + "/top")
    let entry = try #require(tree.entries.last)
    #expect(entry.path == "top/sub/f")

    try FileManager.default.removeItem(atPath: dir + "/top/sub")
    try FileManager.default.createSymbolicLink(atPath: dir + "/top/sub", withDestinationPath: outside)
    #expect(throws: StorageError.self) { try tree.openFile(entry) }
}

@Test(.enabled(if: geteuid() != 0, "root reads everything"))
func unreadableEntriesAreSkippedAndReported() throws {
    let dir = try scratchDirectory()
    defer {
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/top/locked")
        try? FileManager.default.removeItem(atPath: dir)
    }
    try mkdir(dir + "/top/locked")
    try write("x", to: dir + "/top/locked/inside")
    try write("x", to: dir + "/top/private", mode: 0o000)
    try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: dir + "/top/locked")
    let tree = try LocalTree(listing: dir + "/top")
    #expect(tree.entries.map(\.path) == ["top"])
    #expect(Set(tree.skipped.map(\.path)) == ["top/locked", "top/private"])
    #expect(tree.skipped.allSatisfy { $0.code == "unreadable" })
}

/// The sender's listing, through the wire path rules, into the receiver's staging: the same tree
/// arrives (contents, empty folders, executable bits), reduced names aside.
@Test func aListedFolderRoundTripsThroughStaging() throws {
    let dir = try scratchDirectory()
    let out = try scratchDirectory()
    defer {
        try? FileManager.default.removeItem(atPath: dir)
        try? FileManager.default.removeItem(atPath: out)
    }
    let top = dir + "/project"
    try mkdir(top + "/src/deep/er")
    try mkdir(top + "/empty")
    try write("main", to: top + "/src/main.swift")
    try write("#!/bin/sh", to: top + "/src/run.sh", mode: 0o755)
    try write(String(repeating: "é", count: 5_000), to: top + "/src/deep/er/big.txt")
    try write("ignore", to: top + "/.gitignore")

    let tree = try LocalTree(listing: top)
    let firstPath = try RelativePath(wire: try #require(tree.entries.first).wirePath)
    let incoming = try testStore(out).beginTree(topName: try #require(firstPath.components.first))
    for entry in tree.entries {
        let inside = Array(try RelativePath(wire: entry.wirePath).components.dropFirst())
        switch entry.kind {
        case .folder:
            try incoming.makeFolder(inside)
        case .file(let size, let executable):
            let source = try tree.openFile(entry)
            let file = try incoming.beginFile(inside, size: size, executable: executable)
            var offset: UInt64 = 0
            while case let chunk = try source.read(at: offset, count: 4_096), !chunk.isEmpty {
                try file.write(chunk, at: offset)
                offset += UInt64(chunk.count)
            }
            _ = try file.commit()
        }
    }
    #expect(try incoming.commit() == "project")

    let arrived = out + "/project"
    #expect(try listing(arrived) == ["empty", "gitignore", "src"])
    #expect(try listing(arrived + "/empty").isEmpty)
    #expect(try String(contentsOfFile: arrived + "/src/deep/er/big.txt", encoding: .utf8) == String(repeating: "é", count: 5_000))
    #expect(FileManager.default.isExecutableFile(atPath: arrived + "/src/run.sh"))
    #expect(!FileManager.default.isExecutableFile(atPath: arrived + "/src/main.swift"))
}
