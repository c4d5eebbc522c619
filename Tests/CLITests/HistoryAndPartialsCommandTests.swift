import EventSchema
import Foundation
@testable import BlesendCLI
import Keys
import Durable
import Storage
import Testing
import Transfer

/// `blesend history` and `blerecv history` read what the tools wrote; `--since` leaves out
/// older entries; `--json` lines match docs/json-events.schema.json.
@Test func historyShowsWhatWasWrittenSinceWhenAsked() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let now = UInt64(Date().timeIntervalSince1970)
    let journal = try HistoryJournal(disk: try PosixDisk(folder: dir), name: "history-sent")
    try journal.append(HistoryEntry(time: now - 3 * 86_400, direction: .sent, outcome: .saved, resumed: false, size: 5, airBytes: 5,
                                    hash: [UInt8](repeating: 0xAB, count: 32), peer: "alice", fingerprint: "0000 1111",
                                    path: "old.txt", transport: "gatt"))
    try journal.append(HistoryEntry(time: now - 60, direction: .sent, outcome: .failed, resumed: true, size: 9, airBytes: nil,
                                    hash: [], peer: "alice", fingerprint: "0000 1111", path: "new.bin", transport: "l2cap",
                                    detail: "the receiver could not store it"))
    let all = try blesend(["history", "--state", dir])
    #expect(all.status == 0, "\(all.stderr)")
    #expect(all.stdout.split(separator: "\n").count == 2)
    #expect(all.stdout.contains("sent  old.txt  5 B  to alice [0000 1111]  gatt, 5 B on the air"), "\(all.stdout)")
    #expect(all.stdout.contains("sent (failed)  new.bin") && all.stdout.contains("resumed: the receiver could not store it"), "\(all.stdout)")

    let recent = try blesend(["history", "--state", dir, "--since", "1d", "--json"])
    #expect(recent.status == 0)
    let lines = recent.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 1)
    let schema = try JSONSchemaSubset.load()
    let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    #expect(schema.violations(of: object).isEmpty, "\(lines[0]): \(schema.violations(of: object))")
    #expect(object["path"] as? String == "new.bin" && object["result"] as? String == "failed" && object["blake2b"] is NSNull)

    let none = try blerecv(["history", "--state", dir])
    #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("nothing in the history"))
    let bad = try blesend(["history", "--state", dir, "--since", "yesterday"])
    #expect(bad.status == 64, "\(bad.stderr)")
    // A count of days whose seconds overflow 64 bits reaches back before 1970: everything (it trapped).
    let ages = try blesend(["history", "--state", dir, "--since", "300000000000000d"])
    #expect(ages.status == 0, "\(ages.stderr)")
    #expect(ages.stdout.split(separator: "\n").count == 2, "\(ages.stdout)")
}

/// `blerecv partials --keep-partials` takes what blerecv's does, 0 to 8760 hours; a negative
/// count is a usage error (it trapped converting to an unsigned number).
@Test func partialsRefusesANegativeKeepPartials() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let negative = try blerecv(["partials", "--out", dir, "--keep-partials=-1"])
    #expect(negative.status == 64, "\(negative.stderr)")
    #expect(negative.stderr.contains("--keep-partials takes 0 to 8760 hours"), "\(negative.stderr)")
}

/// `blerecv partials` lists this receiver's kept partial files and folders (not another receiver's), with
/// `--json` lines that match the schema, and `--remove` removes them.
@Test func partialsListsAndRemovesOnlyThisReceiversKeptFiles() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let me = try KeyFile.loadIdentity(path: "\(d)/me")
    let sender = try KeyFile.loadIdentity(path: "\(d)/them")
    let out = d + "/out"
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    let store = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: me.publicKey.fileTag,
                                       keepPartials: .seconds(3_600))
    let file = try store.begin(name: "report.pdf", size: 1_000, sender: "them")
    try file.write([UInt8](repeating: 1, count: 400), at: 0)
    try file.checkpoint(PartialCheckpoint(senderKey: sender.publicKey.bytes, id: TransferID(halves: (1, 2)), name: "report.pdf",
                                          size: 1_000, durable: 400, prefixHash: [UInt8](repeating: 0, count: 32)))
    file.closeForResume()
    // A folder part-way: one file finished (5 bytes), one checkpointed at 300.
    let tree = try store.beginTree(topName: "photos", origin: TreeOrigin(senderKey: sender.publicKey.bytes, tree: TransferID(halves: (3, 1)),
                                                                         folder: TransferID(halves: (3, 2)), top: Array("photos".utf8)))
    let done = try tree.beginFile(["a.txt"], id: TransferID(halves: (3, 3)), size: 5, executable: false)
    try done.write(Array("hello".utf8), at: 0)
    _ = try done.commit()
    let part = try tree.beginFile(["b.bin"], id: TransferID(halves: (3, 4)), size: 1_000, executable: false)
    try part.write([UInt8](repeating: 2, count: 300), at: 0)
    try part.checkpoint(PartialCheckpoint(senderKey: sender.publicKey.bytes, id: TransferID(halves: (3, 4)), name: "photos/b.bin",
                                          size: 1_000, durable: 300, prefixHash: [UInt8](repeating: 0, count: 32)))
    part.closeForResume()
    tree.closeForResume()
    let other = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: "someoneelse", keepPartials: .seconds(3_600))
    let theirs = try other.begin(name: "x.bin", size: 10, sender: "them")
    theirs.closeForResume()
    _ = try blerecv(["trust", "\(d)/them.pub", "--name", "bob", "--dir", "\(d)/trusted"])

    let listed = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--trust", "\(d)/trusted"])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.contains("report.pdf  400 B of 1000 B (40 %)  from bob ["), "\(listed.stdout)")
    #expect(listed.stdout.contains("photos/  1 file(s) finished, 305 B in all  from bob ["), "\(listed.stdout)")
    let json = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--json"])
    let lines = json.stdout.split(separator: "\n")
    #expect(lines.count == 2, "\(json.stdout)")
    let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    let schema = try JSONSchemaSubset.load()
    for object in objects { #expect(schema.violations(of: object).isEmpty, "\(object)") }
    #expect(objects.first?["bytes"] as? Int == 400 && objects.first?["peer"] is NSNull)
    #expect(objects.last?["name"] as? String == "photos/" && objects.last?["bytes"] as? Int == 305 && objects.last?["files"] as? Int == 1)

    let removed = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--remove"])
    #expect(removed.status == 0 && removed.stderr.contains("removed 1 partial file(s) and 1 folder(s)"), "\(removed.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(!left.isEmpty && left.allSatisfy { $0.contains(".someoneelse-") }, "\(left)")
}

/// Numbers and names `partials` reads from disk are shown without trapping and without terminal
/// controls (issue 31, item 5): a damaged or hostile record is a line, not a crash or a fake line.
@Test func partialsShowsWhatItReadsFromDiskSafely() {
    #expect(Partials.percent(.max, of: 1) == 100)
    #expect(Partials.percent(500, of: 1000) == 50)
    #expect(Partials.percent(5, of: 0) == 0)
    #expect(Partials.expiry(savedAt: .max - 10, hours: 168) == .max)
    #expect(Partials.expiry(savedAt: 1000, hours: 1) == 4600)
    #expect(Partials.peer("bob\u{1B}[2Jx") == "bob\\e[2Jx")
    #expect(Partials.peer(nil) == "an unknown sender")
}
