import Foundation
import Keys
import Pipeline
import Session
import Sodium
import Storage
import TestDoubles
import Testing
import Transfer

/// A receiver killed mid-file (no shutdown: its partial file is left as the last checkpoint left
/// it) and started again on the same folder: it finds the partial, and the sender, still running,
/// resumes it from that checkpoint; the stored file is the one sent, and nothing else is left.
@Test func aReceiverKilledMidFileAndStartedAgainResumesFromItsLastCheckpoint() throws {
    let resumedAt = try restartMidFile(stopping: false)
    // Two checkpoints (every 256 KiB) were behind the 600,000 bytes acknowledged.
    #expect(resumedAt >= 2 * TransferConstants.checkpointInterval && resumedAt <= 600_000 + TransferConstants.transferWindow,
            "resumed at \(resumedAt)")
}

/// Stopped rather than killed (the link lost, then `shutdown`, as SIGTERM does): the partial is
/// checkpointed at every byte it holds, and the restart resumes from there.
@Test func aReceiverStoppedMidFileResumesFromEveryByteItHad() throws {
    let resumedAt = try restartMidFile(stopping: true)
    #expect(resumedAt >= 600_000 && resumedAt % TransferConstants.checkpointInterval != 0, "resumed at \(resumedAt)")
}

/// Sends 1 MB, stops the receiver once 600,000 bytes are acknowledged (`stopping`: link lost and
/// shut down; else dropped as a SIGKILL leaves it), starts it again on the same folder, and lets
/// the sender resume; returns where it resumed.
private func restartMidFile(stopping: Bool) throws -> UInt64 {
    let fixture = try RestartFixture()
    defer { fixture.remove() }
    let data = bytes(1_000_000, seed: 23)
    return try restartReceiver(fixture, sending: [.file(MemoryFileSource(name: "big.bin", bytes: data))], stopping: stopping) { after in
        #expect(after.storedNames == ["big.bin"])
        #expect(FileManager.default.contents(atPath: fixture.out + "/big.bin") == Data(data))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.out) == ["big.bin"], "no temporary or record left")
        return try #require(after.startOffsets.first)
    }
}

/// Sends `items` to a receiver on `fixture.out`, restarts the receiver once the sender hears
/// 600,000 bytes of a file acknowledged (`stopping`: link lost and shut down; else dropped as a
/// SIGKILL leaves it, its objects kept alive meanwhile since a SIGKILL runs no clean-up), and
/// lets the sender, still running, go on with the new one until the end; returns what `check`
/// makes of that connection (run while the first receiver's objects live: their clean-up would
/// remove what they held, which a SIGKILLed process never does).
private func restartReceiver<Result>(_ fixture: RestartFixture, sending items: [OutgoingItem], stopping: Bool,
                                     check: (InterleavedConnection) throws -> Result) throws -> Result {
    var sender = SenderSession(identity: fixture.alice, receiverKey: fixture.receiverID.publicKey, items: items)
    let first = try fixture.receiver()
    var before = [try InterleavedConnection(sender: sender, receiver: first, now: .zero)]
    return try withExtendedLifetime(first) {
        var now = untilAcknowledged(600_000, &before)
        sender = before[0].sender
        sender.linkLost()
        if stopping {
            before[0].receiver.linkLost(now: now)
            before[0].receiver.shutdown()
        }
        now = now.advanced(by: .seconds(1))
        var second = try fixture.receiver()
        #expect(second.recoverPartials(now: now).kept == 1)
        var after = [try InterleavedConnection(sender: sender, receiver: second, now: now)]
        interleave(&after, from: now)
        #expect(after[0].isDone, "\(String(describing: after[0].receiverError))")
        #expect(failures(after[0]).isEmpty, "\(failures(after[0]))")
        second.shutdown()
        return try check(after[0])
    }
}

/// A receiver's output folder that keeps partials across runs (`out`), a sender it trusts
/// (`alice`), and a folder to send (`album`, under `src`), in a scratch folder.
private struct RestartFixture {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("blesend-restart-\(UUID().uuidString)").path
    let receiverID = Identity.generate(), alice = Identity.generate()
    var out: String { root + "/out" }
    var album: String { root + "/src/album" }
    /// The album's files by path (it also holds an empty folder, `empty`).
    let files: [String: [UInt8]] = ["a.txt": Array("first".utf8), "big.bin": bytes(1_000_000, seed: 29),
                                    "sub/c.txt": Array("after the big one".utf8), "sub/deeper/d.txt": Array("last".utf8)]

    init() throws {
        for (path, content) in files {
            let url = URL(fileURLWithPath: album + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content).write(to: url)
        }
        try FileManager.default.createDirectory(atPath: album + "/empty", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// A receiver started (again) on `out`.
    func receiver() throws -> ReceiverSession {
        let store = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: "test",
                                           keepPartials: .seconds(3_600))
        return ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "alice", key: alice.publicKey)]), store: store)
    }

    /// Checks that `out` holds exactly the album, identical, with nothing hidden beside it.
    func expectAlbumArrived() throws {
        for (path, content) in files {
            #expect(FileManager.default.contents(atPath: out + "/album/" + path) == Data(content), "\(path)")
        }
        #expect(FileManager.default.fileExists(atPath: out + "/album/empty"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["album"], "no staging folder or journal left")
    }
}

/// Steps `connections` until the sender hears `bytes` of one file acknowledged; returns the time.
private func untilAcknowledged(_ bytes: UInt64, _ connections: inout [InterleavedConnection]) -> Instant {
    interleave(&connections, from: .zero) { connections in
        connections[0].senderEvents.contains { if case .transfer(.progress(_, _, let acked)) = $0 { acked >= bytes } else { false } }
    }
}

/// The sender's failures in `connection`.
private func failures(_ connection: InterleavedConnection) -> [SenderSession.Event] {
    connection.senderEvents.filter { if case .transfer(.fileFailed) = $0 { true } else { false } }
}

/// A receiver restarted in the middle of a folder (killed: its objects kept alive, as a SIGKILL
/// runs no clean-up; or stopped): started again on the same folder, it finds the folder and its
/// file part-way, and the sender, still running, finishes it; the folder arrives identical, with
/// nothing hidden left beside it.
@Test(arguments: [false, true])
func aReceiverRestartedMidFolderTakesItUpWhereItWas(stopping: Bool) throws {
    let fixture = try RestartFixture()
    defer { fixture.remove() }
    try restartReceiver(fixture, sending: try LocalTree(listing: fixture.album).outgoingItems(tree: randomTransferID()),
                        stopping: stopping) { after in
        let resumedAt = try #require(after.startOffsets.first)
        #expect(resumedAt >= 2 * TransferConstants.checkpointInterval, "resumed at \(resumedAt)")
        try fixture.expectAlbumArrived()
    }
}

/// Both sides cut off mid-folder and started again, as after a power cut: the sender run again
/// with the same tree id (and its files under the ids of the first run, as blesend keeps them)
/// is answered from what the receiver kept: the folders and the file finished before are
/// confirmed without their bytes, the big file resumes from its checkpoint, the rest follows.
@Test func aSenderRunAgainMidFolderResumesWhatTheReceiverKept() throws {
    let fixture = try RestartFixture()
    defer { fixture.remove() }
    let tree = randomTransferID()
    // As blesend makes them (`OutgoingTransferIDs.fileID`): from the tree id, the path, the stamp.
    let fileID: (LocalTreeEntry) -> TransferID = { entry in
        var hash = BLAKE2b(outputLength: 16)
        hash.update(tree.bytes + entry.wirePath + entry.stamp)
        return TransferID(bytes: hash.finalize()) ?? randomTransferID()
    }
    func run(again: Bool) throws -> SenderSession {
        SenderSession(identity: fixture.alice, receiverKey: fixture.receiverID.publicKey,
                      items: try LocalTree(listing: fixture.album).outgoingItems(tree: tree, fileID: fileID, sentBefore: again))
    }

    let first = try fixture.receiver()
    var before = [try InterleavedConnection(sender: try run(again: false), receiver: first, now: .zero)]
    try withExtendedLifetime(first) {
        let now = untilAcknowledged(600_000, &before).advanced(by: .seconds(1))
        var second = try fixture.receiver()
        #expect(second.recoverPartials(now: now).kept == 1)
        var after = [try InterleavedConnection(sender: try run(again: true), receiver: second, now: now)]
        interleave(&after, from: now)
        #expect(after[0].isDone, "\(String(describing: after[0].receiverError))")
        #expect(failures(after[0]).isEmpty, "\(failures(after[0]))")
        let offsets = after[0].startOffsets
        #expect(offsets.contains { $0 >= 2 * TransferConstants.checkpointInterval && $0 < 1_000_000 }, "big.bin resumed: \(offsets)")
        #expect(offsets.contains(5), "a.txt, finished before, answered at its end: \(offsets)")
        try fixture.expectAlbumArrived()
        second.shutdown()
    }
}
