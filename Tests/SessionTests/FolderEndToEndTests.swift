import Foundation
import Keys
import MemoryTransport
import Session
import Simulation
import Storage
import TestDoubles
import Testing
import Transfer

/// A folder on disk, through the whole stack in memory, into a real output folder: `LocalTree`
/// on one side, `DirectoryFileStore` building the tree hidden and moving it into place on the
/// other, under loss and cuts.
@Suite struct FolderEndToEndTests {
    let root = NSTemporaryDirectory() + "blesend-folder-\(UUID().uuidString)"
    var source: String { root + "/src/album" }
    var out: String { root + "/out" }

    func write(_ path: String, _ bytes: [UInt8], mode: Int = 0o644) throws {
        let url = URL(fileURLWithPath: source + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }

    /// One thing in a folder: a file's bytes and whether it is executable, or a folder (nil bytes).
    struct Entry: Equatable {
        var bytes: [UInt8]?
        var executable = false
    }

    /// Every path under `folder`.
    func contents(_ folder: String) throws -> [String: Entry] {
        var found: [String: Entry] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        for case let path as String in enumerator {
            let full = folder + "/" + path
            let attributes = try FileManager.default.attributesOfItem(atPath: full)
            switch attributes[.type] as? FileAttributeType {
            case .typeDirectory: found[path] = Entry(bytes: nil)
            case .typeRegular:
                let mode = (attributes[.posixPermissions] as? Int) ?? 0
                found[path] = Entry(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: full))), executable: mode & 0o100 != 0)
            default: found[path] = Entry(bytes: [0xFF], executable: true)   // anything else is wrong
            }
        }
        return found
    }

    @Test(arguments: [false, true])
    func aFolderOnDiskArrivesIdenticalInTheOutputFolder(lossy: Bool) throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try write("sub/deep/x.bin", bytes(70_000, seed: 1))
        try write("ünï code.txt", Array("Unicode names arrive as sent".utf8))
        try write("run.sh", Array("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
        try write("zero.bin", [])
        for i in 0..<30 { try write("many/f\(i).txt", Array(String(repeating: "line \(i)\n", count: 20).utf8)) }
        try FileManager.default.createDirectory(atPath: source + "/empty", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: source + "/link", withDestinationPath: "/etc/passwd")
        // Something already called "album" in the output folder: the folder gets a number.
        try Data([1]).write(to: URL(fileURLWithPath: out + "/album"))

        let tree = try LocalTree(listing: source)
        #expect(tree.skipped.map(\.path) == ["album/link"])
        let pair = Pair()
        let trust = TrustStore(peers: [.init(name: "alice", key: pair.senderID.publicKey)])
        var sender = SenderSession(identity: pair.senderID, receiverKey: pair.receiverID.publicKey,
                                   items: tree.outgoingItems(tree: randomTransferID()) + [.file(MemoryFileSource(name: "single.txt", bytes: Array("hello".utf8)))],
                                   compresses: true)
        var receiver = ReceiverSession(identity: pair.receiverID, trust: trust, store: try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: "test"))
        var options = LoopbackRun.Options(maxDatagramSize: 244)
        if lossy {
            options.faults = FaultProfile(loss: 0.03, duplication: 0.01, reordering: 0.03)
            options.cutsAfterDatagrams = [60, 400]
        }
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
        #expect(outcome.finished, "\(outcome.senderErrors) \(outcome.receiverErrors)")
        let events = outcome.senderEvents.compactMap { if case .transfer(let e) = $0 { e } else { nil } }
        #expect(events.contains { if case .folderSaved(_, "album-1") = $0 { true } else { false } })
        #expect(!events.contains { if case .fileFailed = $0 { true } else { false } })

        var expected = try contents(source)
        expected["link"] = nil
        #expect(try contents(out + "/album-1") == expected)
        #expect(try contents(out + "/album-1")["run.sh"]?.executable == true)
        #expect(try contents(out + "/album-1")["zero.bin"] == Entry(bytes: []))
        // Nothing hidden left behind, nothing beside the folder but the file that was there and the single file.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out)) == ["album", "album-1", "single.txt"])
    }
}

