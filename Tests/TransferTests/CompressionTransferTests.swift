import Pipeline
import TestDoubles
import Testing
@testable import Transfer

/// A stand-in for zstd that keeps the transfer layer's rules visible: a chunk of one repeated
/// byte "compresses" to that byte, anything else goes raw; both sides count the history they
/// were handed, which must agree.
final class RunCompressor: ChunkCompressor {
    var history = 0
    var resets = 0
    func compress(_ chunk: [UInt8]) -> [UInt8]? {
        history += chunk.count
        guard let first = chunk.first, chunk.allSatisfy({ $0 == first }), chunk.count > 1 else { return nil }
        return [first]
    }
    func reset() { history = 0; resets += 1 }
}

final class RunDecompressor: ChunkDecompressor {
    var history = 0
    /// Decompresses to this many bytes instead of the declared size (a lying sender).
    var produce: Int?
    func decompress(_ compressed: [UInt8], expectedSize: Int) throws(ChunkDecompressionError) -> [UInt8] {
        guard compressed.count == 1 else { throw ChunkDecompressionError(code: .corrupt) }
        history += expectedSize
        return Array(repeating: compressed[0], count: produce ?? expectedSize)
    }
    func appendRaw(_ chunk: [UInt8]) { history += chunk.count }
    func reset() { history = 0 }
}

/// 40 KiB of one byte, 10 KiB of a pattern, 20 KiB of another byte: compressed, raw, compressed.
private let mixed: [UInt8] = Array(repeating: 7, count: 40_960) + pattern(10_240) + Array(repeating: 9, count: 20_480)

@Test func grantedCompressionCarriesCompressibleChunksAsZdata() throws {
    let compressor = RunCompressor(), decompressor = RunDecompressor()
    var c = Conversation(files: [MemoryFileSource(name: "m", bytes: mixed)], compressor: compressor, decompressor: decompressor)
    #expect(c.receiverOffers == [.compression, .pipelining, .busy])
    #expect(try c.runConnection())
    #expect(c.store.committed["m"] == mixed)
    #expect(c.zdataMessages > 0)
    #expect(c.sender.fileBytesSent == UInt64(mixed.count))
    #expect(c.sender.payloadBytesSent < UInt64(mixed.count) / 2)
    #expect(compressor.history == mixed.count && decompressor.history == mixed.count)
}

@Test func aReceiverThatGrantsNothingGetsRawData() throws {
    // The sender asks (the characteristic said so), the receiver grants nothing: no zdata.
    var c = Conversation(files: [MemoryFileSource(name: "m", bytes: mixed)], compressor: RunCompressor())
    c.receiverOffers = .compression
    #expect(try c.runConnection())
    #expect(c.store.committed["m"] == mixed)
    #expect(c.zdataMessages == 0)
    #expect(c.sender.extensions.isEmpty)
}

@Test func aSenderAsksOnlyForWhatTheReceiverOffers() {
    var sender = TransferSender(files: [MemoryFileSource(name: "m", bytes: mixed)], makeHasher: { TestHasher() },
                                makeID: { sampleID }, compressor: RunCompressor())
    #expect(sender.openingMessages(receiverOffers: []).count == 1)
    sender.connectionLost()
    #expect(sender.openingMessages(receiverOffers: [.compression, TransferExtensions(rawValue: 1 << 30)]).first == .hello(.compression))
    var plain = TransferSender(files: [MemoryFileSource(name: "m", bytes: mixed)], makeHasher: { TestHasher() }, makeID: { sampleID })
    #expect(plain.openingMessages(receiverOffers: .compression).count == 1)
}

@Test func aReceiverGrantsOnlyWhatItKnowsAndTheSenderTakesNoMore() throws {
    var receiver = TransferReceiver(store: MemoryFileStore(), makeHasher: { TestHasher() }, decompressor: RunDecompressor())
    let offer = TransferMessage.offer(.init(id: sampleID, size: 10, name: "n"))
    let reply = try receiver.begin(sender: "x", senderKey: [1], opening: [.hello(TransferExtensions(rawValue: 0xFFFF_FFFF)), offer], now: .zero)
    #expect(reply == [.hello([.compression, .pipelining, .busy]), .accept(id: sampleID, offset: 0)])
    receiver.discardAll()

    var sender = TransferSender(files: [MemoryFileSource(name: "m", bytes: [1])], makeHasher: { TestHasher() },
                                makeID: { sampleID }, compressor: RunCompressor())
    _ = sender.openingMessages(receiverOffers: .compression)
    #expect(throws: TransferError.unexpected(.hello)) { try sender.receive(.hello(TransferExtensions(rawValue: 3))) }
    // A hello the sender did not ask for, or a second one, is out of place too.
    var asked = TransferSender(files: [MemoryFileSource(name: "m", bytes: [1])], makeHasher: { TestHasher() },
                               makeID: { sampleID }, compressor: RunCompressor())
    _ = asked.openingMessages(receiverOffers: .compression)
    try asked.receive(.hello(.compression))
    #expect(throws: TransferError.unexpected(.hello)) { try asked.receive(.hello(.compression)) }
    var unasked = TransferSender(files: [MemoryFileSource(name: "m", bytes: [1])], makeHasher: { TestHasher() }, makeID: { sampleID })
    _ = unasked.openingMessages(receiverOffers: .compression)
    #expect(throws: TransferError.unexpected(.hello)) { try unasked.receive(.hello([])) }
}

/// A receiver in a session that did not grant compression, a chunk that claims more than was
/// offered, and one that does not decompress as declared all end the session and leave nothing.
@Test func zdataOutsideItsRulesFailsTheFileAndLeavesNothing() throws {
    let offer = TransferMessage.offer(.init(id: sampleID, size: 100, name: "n"))
    let cases: [(grant: Bool, TransferMessage, produce: Int?, TransferError)] = [
        (false, .zdata(originalSize: 10, frame: [1]), nil, .unexpected(.zdata)),
        (true, .zdata(originalSize: 101, frame: [1]), nil, .moreBytesThanOffered),
        (true, .zdata(originalSize: 10, frame: [1, 2]), nil, .decompressionFailed(.init(code: .corrupt))),
        (true, .zdata(originalSize: 10, frame: [1]), 11, .decompressionFailed(.init(code: .sizeMismatch))),
    ]
    for (grant, message, produce, expected) in cases {
        let store = MemoryFileStore()
        let decompressor = RunDecompressor()
        decompressor.produce = produce
        var receiver = TransferReceiver(store: store, makeHasher: { TestHasher() }, decompressor: decompressor)
        _ = try receiver.begin(sender: "x", senderKey: [1], opening: (grant ? [.hello(.compression)] : []) + [offer], now: .zero)
        _ = try receiver.receive(.data([1, 2, 3]), now: .zero)
        #expect(throws: expected) { try receiver.receive(message, now: .zero) }
        receiver.abandonCurrent(because: .senderBrokeProtocol(expected))
        #expect(store.openTemporaries == 0)
        #expect(store.committed.isEmpty)
    }
}

@Test(arguments: [3, 9, 20])
func aCompressedTransferResumesAfterACut(cutAfter: Int) throws {
    let compressor = RunCompressor(), decompressor = RunDecompressor()
    let bytes = Array(repeating: 5, count: 300_000) + pattern(100_000) + Array(repeating: 6, count: 100_000)
    var c = Conversation(files: [MemoryFileSource(name: "r", bytes: bytes)], compressor: compressor, decompressor: decompressor)
    #expect(try c.runConnection(cutAfter: cutAfter) == false)
    #expect(try c.runConnection())
    #expect(c.store.committed["r"] == bytes)
    #expect(compressor.resets >= 2)
}
