import Keys
import MemoryTransport
import Pipeline
import Simulation
import TestDoubles
import Testing
import Transfer
import Zstd
@testable import Session

/// Text: compresses well. (Repetitive prose with a counter, so chunks are not all alike.)
private func text(_ count: Int) -> [UInt8] {
    var out: [UInt8] = []
    var line = 0
    while out.count < count {
        out += Array("line \(line): every chunk joins the history, whether it went compressed or raw.\n".utf8)
        line += 1
    }
    return Array(out.prefix(count))
}

private func endpoints(_ pair: Pair, files: [any FileSource], compresses: Bool, receiverDecompresses: Bool = true)
    -> (SenderSession, ReceiverSession) {
    let trust = TrustStore(peers: [.init(name: "alice", key: pair.senderID.publicKey)])
    return (SenderSession(identity: pair.senderID, receiverKey: pair.receiverID.publicKey, files: files, compresses: compresses),
            ReceiverSession(identity: pair.receiverID, trust: trust, store: pair.store, decompresses: receiverDecompresses))
}

/// The whole stack with real zstd: text goes compressed, random bytes as they are, both arrive;
/// a receiver that does not decompress gets everything raw, under lossy links and cuts too.
@Test(arguments: [false, true])
func compressionCarriesTextSmallerAndRandomBytesAsTheyAre(lossy: Bool) throws {
    let textBytes = text(600_000), randomBytes = bytes(300_000, seed: 3)
    for receiverDecompresses in [true, false] {
        let pair = Pair()
        var (sender, receiver) = endpoints(pair, files: [MemoryFileSource(name: "t.txt", bytes: textBytes),
                                                         MemoryFileSource(name: "r.bin", bytes: randomBytes)],
                                           compresses: true, receiverDecompresses: receiverDecompresses)
        var options = LoopbackRun.Options(maxDatagramSize: 244)
        if lossy {
            options.faults = FaultProfile(loss: 0.03, duplication: 0.01, reordering: 0.03)
            options.cutsAfterDatagrams = [400, 1500]
        }
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
        #expect(outcome.finished, "\(outcome.senderErrors) \(outcome.receiverErrors)")
        #expect(pair.store.committed["t.txt"] == textBytes)
        #expect(pair.store.committed["r.bin"] == randomBytes)
        #expect(pair.store.openTemporaries == 0)
        if receiverDecompresses {
            // Text shrinks several times; random bytes add nothing.
            #expect(sender.payloadBytesSent < sender.fileBytesSent)
            #expect(Double(sender.payloadBytesSent) < Double(textBytes.count) / 3 + Double(sender.fileBytesSent - UInt64(textBytes.count)))
        } else {
            #expect(sender.payloadBytesSent == sender.fileBytesSent)
        }
    }
}

/// A trusted sender that sends a zstd bomb: a frame that would decompress to 16 MiB, declared as
/// one chunk. The receiver refuses it before allocating, ends the session with a typed error and
/// keeps nothing of the file.
@Test func aZstdBombFromATrustedSenderEndsTheFileAndLeavesNothing() throws {
    let store = MemoryFileStore()
    var receiver = TransferReceiver(store: store, makeHasher: { FileHasher() }, decompressor: ZstdChunkDecompressor())
    let id = TransferID(bytes: Array(repeating: 1, count: 16))!
    _ = try receiver.begin(sender: "s", senderKey: [1], opening: [.hello(.compression), .offer(.init(id: id, size: 1 << 30, name: "b"))], now: .zero)
    let bomb = try #require(HistoryCompressor(level: 1, historyLimit: 0).compress([UInt8](repeating: 0, count: 16 << 20)))
    #expect(bomb.count < 4_096)
    for declared in [16_384, 1] {
        #expect(throws: TransferError.self) { try receiver.receive(.zdata(originalSize: declared, frame: bomb), now: .zero) }
        receiver.abandonCurrent(because: .tampered)
        #expect(store.openTemporaries == 0 && store.committed.isEmpty)
        _ = try receiver.begin(sender: "s", senderKey: [1], opening: [.hello(.compression), .offer(.init(id: id, size: 1 << 30, name: "b"))], now: .zero)
    }
    receiver.discardAll()
}

/// A sender with only a folder, connecting to a receiver that lists no `folders`: no handshake,
/// the session is finished and says why.
@Test func aSenderWithOnlyAFolderDoesNotHandshakeWithAnOlderReceiver() throws {
    let pair = Pair()
    let tree = TransferID(bytes: Array(repeating: 3, count: 16))!
    var sender = SenderSession(identity: pair.senderID, receiverKey: pair.receiverID.publicKey,
                               items: [.folder(tree: tree, path: Array("t".utf8)), .commit(tree: tree, name: "t")])
    try sender.connect(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase, receiverExtensions: [.pipelining])
    #expect(!sender.isConnected)
    #expect(sender.isFinished)
    #expect(sender.takeEvents() == [.transfer(.fileFailed(index: 0, .foldersNotSupported)), .transfer(.finished)])
    #expect(try sender.nextDatagram(now: .zero) == nil)
}
