import Foundation
import Keys
import Storage
import Testing
import Transfer
@testable import BlesendCLI

/// blesend's kept ids: a file's and a folder's survive a run until they are saved, and a folder's
/// files go under ids that change with the file.
@Test func keptIDsOutliveARunUntilWhatTheyNameIsSaved() throws {
    let root = NSTemporaryDirectory() + "blesend-ids-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: root) }
    try FileManager.default.createDirectory(atPath: root + "/album/sub", withIntermediateDirectories: true)
    try Data("one".utf8).write(to: URL(fileURLWithPath: root + "/album/sub/a.txt"))
    try Data("single".utf8).write(to: URL(fileURLWithPath: root + "/single.txt"))
    let receiver = Identity.generate().publicKey, other = Identity.generate().publicKey
    func ids(for key: PublicKey = receiver) throws -> OutgoingTransferIDs {
        try #require(OutgoingTransferIDs(stateFolder: root + "/state", receiver: key))
    }

    let first = try #require(try ids().treeID(for: root + "/album"))
    #expect(!first.kept && first.problem == nil)
    let again = try #require(try ids().treeID(for: root + "/album"))
    #expect(again.kept && again.id == first.id, "a run again sends the folder under the same tree id")
    #expect(try ids(for: other).treeID(for: root + "/album")?.id != first.id, "another receiver: another id")
    let saved = try ids()
    _ = saved.treeID(for: root + "/album")
    saved.forgetTree(first.id)
    let fresh = try #require(try ids().treeID(for: root + "/album"))
    #expect(!fresh.kept && fresh.id != first.id, "once the folder is in place, sending it again is a new transfer")
    #expect(try ids().treeID(for: root + "/missing") == nil)

    let entry = try #require(try LocalTree(listing: root + "/album").entries.first { $0.path == "album/sub/a.txt" })
    let id = OutgoingTransferIDs.fileID(tree: fresh.id, entry: entry)
    #expect(OutgoingTransferIDs.fileID(tree: fresh.id, entry: entry) == id)
    #expect(OutgoingTransferIDs.fileID(tree: first.id, entry: entry) != id)
    try Data("two".utf8).write(to: URL(fileURLWithPath: root + "/album/sub/a.txt"))
    let changed = try #require(try LocalTree(listing: root + "/album").entries.first { $0.path == "album/sub/a.txt" })
    #expect(OutgoingTransferIDs.fileID(tree: fresh.id, entry: changed) != id, "a file written in between gets another id")

    let single = try LocalFileSource(path: root + "/single.txt")
    #expect(try ids().assign([single]).isEmpty)
    let kept = try #require(single.transferID)
    let reopened = try LocalFileSource(path: root + "/single.txt")
    _ = try ids().assign([reopened])
    #expect(reopened.transferID == kept)
    try ids().forget(reopened)
    let later = try LocalFileSource(path: root + "/single.txt")
    _ = try ids().assign([later])
    #expect(later.transferID != kept)
}
