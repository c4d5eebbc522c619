import Foundation
import Keys
import State
import Storage
import Testing
import Transfer

/// `blesend history` and `blerecv history` read what the tools wrote; `--since` leaves out
/// older entries; `--json` lines match docs/json-events.schema.json.
@Test func historyShowsWhatWasWrittenSinceWhenAsked() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let now = UInt64(Date().timeIntervalSince1970)
    let journal = try HistoryJournal(disk: try PosixJournalDisk(folder: dir), name: "history-sent")
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
}

/// `blerecv partials` lists this receiver's kept partial files (not another receiver's), with
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
    let other = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: "someoneelse", keepPartials: .seconds(3_600))
    let theirs = try other.begin(name: "x.bin", size: 10, sender: "them")
    theirs.closeForResume()
    _ = try blerecv(["trust", "\(d)/them.pub", "--name", "bob", "--dir", "\(d)/trusted"])

    let listed = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--trust", "\(d)/trusted"])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.contains("report.pdf  400 B of 1000 B (40 %)  from bob ["), "\(listed.stdout)")
    let json = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(try JSONSchemaSubset.load().violations(of: object).isEmpty, "\(json.stdout)")
    #expect(object["bytes"] as? Int == 400 && object["peer"] is NSNull)

    let removed = try blerecv(["partials", "--key", "\(d)/me", "--out", out, "--remove"])
    #expect(removed.status == 0 && removed.stderr.contains("removed 1 partial file(s)"), "\(removed.stderr)")
    let left = try FileManager.default.contentsOfDirectory(atPath: out)
    #expect(!left.isEmpty && left.allSatisfy { $0.contains(".someoneelse-") }, "\(left)")
}
