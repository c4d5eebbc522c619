import Testing
@testable import Transfer

// The chunk transforms on both sides, with the stand-ins of CompressionTransferTests: a chunk of
// one repeated byte compresses to that byte, anything else goes raw.

@Test func theDecoderPassesRawChunksAndKeepsTheHistoryOnlyWhileCompressing() throws {
    let decompressor = RunDecompressor()
    var decoder = ChunkDecoder(decompressor: decompressor)
    #expect(decoder.decompresses)
    #expect(try decoder.decode(.raw([1, 2, 3]), compressing: false) == [1, 2, 3])
    #expect(decompressor.history == 0)
    #expect(try decoder.decode(.raw([1, 2, 3]), compressing: true) == [1, 2, 3])
    #expect(try decoder.decode(.compressed(originalSize: 5, frame: [9]), compressing: true) == [9, 9, 9, 9, 9])
    #expect(decompressor.history == 8)
    decoder.reset()
    #expect(decompressor.history == 0)
}

@Test func theDecoderRefusesWhatDoesNotDecompressAsDeclared() {
    let decompressor = RunDecompressor()
    var decoder = ChunkDecoder(decompressor: decompressor)
    #expect(throws: ChunkDecompressionError(code: .corrupt)) { try decoder.decode(.compressed(originalSize: 4, frame: [1, 2]), compressing: true) }
    decompressor.produce = 3
    #expect(throws: ChunkDecompressionError(code: .sizeMismatch)) { try decoder.decode(.compressed(originalSize: 4, frame: [1]), compressing: true) }
    // Without a decompressor nothing compressed decodes (the receiver never grants it then).
    var plain = ChunkDecoder(decompressor: nil)
    #expect(!plain.decompresses)
    #expect(throws: ChunkDecompressionError(code: .sizeMismatch)) { try plain.decode(.compressed(originalSize: 4, frame: [1]), compressing: true) }
}

@Test func incomingChunksCountTheirFileBytes() {
    #expect(IncomingChunk.raw([1, 2]).count == 2 && IncomingChunk.raw([1, 2]).kind == .data)
    #expect(IncomingChunk.compressed(originalSize: 700, frame: [1]).count == 700)
    #expect(IncomingChunk.compressed(originalSize: 700, frame: [1]).kind == .zdata)
}

@Test func theEncoderSendsRawChunksAsTheyAreWhenNotCompressing() {
    var encoder = ChunkEncoder(compressor: RunCompressor())
    #expect(encoder.chunkSize(limit: 100, compressing: false) == 100)
    #expect(encoder.chunkSize(limit: 100, compressing: true) == TransferConstants.maxCompressedChunk)
    #expect(ChunkEncoder(compressor: nil).chunkSize(limit: 100, compressing: true) == 100, "nothing to compress with")
    let (message, count) = encoder.encode([7, 7, 7], limit: 100, compressing: false)
    #expect(message == .data([7, 7, 7]) && count == 3)
}

@Test func theEncoderSendsACompressibleChunkAsOneZdataAndTheRestRawInPieces() {
    let compressor = RunCompressor()
    var encoder = ChunkEncoder(compressor: compressor)
    let (zdata, all) = encoder.encode(Array(repeating: 4, count: 1_000), limit: 100, compressing: true)
    #expect(zdata == .zdata(originalSize: 1_000, frame: [4]) && all == 1_000)
    #expect(encoder.nextLeftover(limit: 100) == nil)

    let chunk = pattern(250)
    let (first, count) = encoder.encode(chunk, limit: 100, compressing: true)
    #expect(first == .data(Array(chunk[0..<100])) && count == 100)
    #expect(encoder.nextLeftover(limit: 100) == Array(chunk[100..<200]))
    #expect(encoder.nextLeftover(limit: 100) == Array(chunk[200..<250]))
    #expect(encoder.nextLeftover(limit: 100) == nil)
    #expect(compressor.history == 1_250, "every chunk joins the history, compressed or not")
}

@Test func resettingTheEncoderForgetsTheLeftoverAndTheHistory() {
    let compressor = RunCompressor()
    var encoder = ChunkEncoder(compressor: compressor)
    _ = encoder.encode(pattern(250), limit: 100, compressing: true)
    encoder.dropLeftover()
    #expect(encoder.nextLeftover(limit: 100) == nil)
    #expect(compressor.resets == 0, "a lost link forgets the leftover only")
    _ = encoder.encode(pattern(250), limit: 100, compressing: true)
    encoder.reset()
    #expect(encoder.nextLeftover(limit: 100) == nil)
    #expect(compressor.resets == 1 && compressor.history == 0)
}
