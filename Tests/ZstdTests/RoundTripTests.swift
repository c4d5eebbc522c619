import CZstd
import Testing
import Zstd

/// Sends `chunks` through a compressor and a decompressor the way the transfer layer will: a frame
/// when `compress` gives one (unless `forceRaw` says to send that chunk raw anyway), the chunk
/// itself otherwise. Checks after every chunk that both histories are the same bytes, and returns
/// what arrived and how many chunks went compressed.
func send(_ chunks: [[UInt8]], from compressor: HistoryCompressor, to decompressor: HistoryDecompressor,
          forceRaw: (Int) -> Bool = { _ in false }) throws -> (received: [UInt8], compressed: Int) {
    var received: [UInt8] = []
    var compressed = 0
    for (index, chunk) in chunks.enumerated() {
        if let frame = compressor.compress(chunk), !forceRaw(index) {
            #expect(frame.count * 100 <= chunk.count * compressor.maxFramePercent)
            received += try decompressor.decompress(frame, expectedSize: chunk.count)
            compressed += 1
        } else {
            decompressor.appendRaw(chunk)
            received += chunk
        }
        #expect(compressor.history == decompressor.history, "histories differ after chunk \(index)")
    }
    return (received, compressed)
}

@Suite struct RoundTripTests {
    @Test func textInFullChunksRoundTripsAndMostlyCompresses() throws {
        let text = textBytes(1 << 20)
        let chunks = pieces(of: text, sizes: [ChunkFrameLimits.maxChunk])
        let result = try send(chunks, from: HistoryCompressor(), to: HistoryDecompressor())
        #expect(result.received == text)
        #expect(result.compressed == chunks.count)
    }

    @Test(arguments: [1, 3, 9, 19] as [Int32])
    func everyLevelRoundTrips(level: Int32) throws {
        let text = textBytes(200_000, seed: UInt64(level))
        let result = try send(pieces(of: text, sizes: [16_384, 7_001]), from: HistoryCompressor(level: level),
                              to: HistoryDecompressor())
        #expect(result.received == text)
    }

    /// Text and random bytes interleaved, chunk sizes from 0 to the maximum, some compressible
    /// chunks sent raw anyway, and resets on both sides in the middle: every chunk arrives intact
    /// and the histories never drift apart.
    @Test func mixedChunksRawChoicesAndResets() throws {
        var chunks: [[UInt8]] = []
        for round in 0..<6 {
            chunks += pieces(of: textBytes(40_000, seed: UInt64(10 + round)), sizes: [16_384, 1, 0, 5_000, 300])
            chunks += pieces(of: randomBytes(20_000, seed: UInt64(20 + round)), sizes: [16_384, 999])
            chunks.append(textBytes(16_384, seed: 10))   // repeats the first text: history pays here
        }
        let compressor = HistoryCompressor(), decompressor = HistoryDecompressor()
        let half = chunks.count / 2
        let first = try send(Array(chunks[..<half]), from: compressor, to: decompressor, forceRaw: { $0 % 3 == 1 })
        compressor.reset()
        decompressor.reset()
        #expect(compressor.history.isEmpty && decompressor.history.isEmpty)
        let second = try send(Array(chunks[half...]), from: compressor, to: decompressor, forceRaw: { $0 % 4 == 2 })
        #expect(first.received + second.received == chunks.flatMap { $0 })
        #expect(first.compressed > 0 && second.compressed > 0)
    }

    @Test func randomChunksDoNotPayAndStillJoinTheHistory() {
        let compressor = HistoryCompressor()
        let random = randomBytes(5 * 16_384, seed: 3)
        for chunk in pieces(of: random, sizes: [16_384]) {
            #expect(compressor.compress(chunk) == nil)
        }
        #expect(compressor.history == Array(random.suffix(ChunkFrameLimits.historyLimit)))
    }

    /// A chunk that did not pay leaves libzstd mid-frame; the next chunk must compress all the same.
    @Test func aChunkThatDidNotPayDoesNotSpoilTheNext() throws {
        let compressor = HistoryCompressor(), decompressor = HistoryDecompressor()
        let random = randomBytes(16_384, seed: 4), text = textBytes(16_384, seed: 4)
        #expect(compressor.compress(random) == nil)
        decompressor.appendRaw(random)
        let frame = try #require(compressor.compress(text))
        #expect(try decompressor.decompress(frame, expectedSize: text.count) == text)
    }

    @Test func historyKeepsTheNewestBytesUpToItsLimit() {
        let compressor = HistoryCompressor(historyLimit: 1_000)
        let decompressor = HistoryDecompressor(historyLimit: 1_000)
        let bytes = textBytes(5_000)
        for chunk in pieces(of: bytes, sizes: [300, 1_200, 7]) {
            _ = compressor.compress(chunk)
            decompressor.appendRaw(chunk)
            #expect(compressor.history == decompressor.history)
        }
        #expect(compressor.history == Array(bytes.suffix(1_000)))
    }

    /// A chunk that repeats bytes from the history becomes a tiny frame; without history the same
    /// chunk only compresses as text alone does.
    @Test func historyMakesRepeatedTextNearlyFree() throws {
        let earlier = textBytes(48_000, seed: 5)
        let chunk = Array(earlier[20_000..<36_384])
        let withHistory = HistoryCompressor(), withoutHistory = HistoryCompressor(historyLimit: 0)
        let decompressor = HistoryDecompressor()
        for piece in pieces(of: earlier, sizes: [16_000]) {
            _ = withHistory.compress(piece)
            decompressor.appendRaw(piece)
        }
        let small = try #require(withHistory.compress(chunk))
        let alone = try #require(withoutHistory.compress(chunk))
        #expect(small.count < 64)
        #expect(alone.count < chunk.count / 2)   // text compresses well on its own too
        #expect(small.count * 10 < alone.count)
        #expect(try decompressor.decompress(small, expectedSize: chunk.count) == chunk)
    }

    @Test func noHistoryRoundTrips() throws {
        let text = textBytes(100_000, seed: 6)
        let result = try send(pieces(of: text, sizes: [16_384]), from: HistoryCompressor(historyLimit: 0),
                              to: HistoryDecompressor(historyLimit: 0))
        #expect(result.received == text && result.compressed > 0)
    }

    /// History that begins with the zstd dictionary magic is still plain bytes to both sides.
    @Test func historyStartingWithDictionaryMagicIsRawContent() throws {
        let magic = littleEndian(UInt32(0xEC30_A437))
        let first = magic + textBytes(10_000, seed: 7)
        let second = magic + textBytes(10_000, seed: 7)   // repeats the first: references the history
        let result = try send([first, second], from: HistoryCompressor(), to: HistoryDecompressor(), forceRaw: { $0 == 0 })
        #expect(result.received == first + second && result.compressed == 1)
    }

    @Test func payoffThresholdIsTheCallersChoice() throws {
        let chunk = textBytes(16_384, seed: 8)
        let size = try #require(HistoryCompressor().compress(chunk)).count
        let percent = size * 100 / chunk.count   // the frame is just over this percentage
        #expect(HistoryCompressor(maxFramePercent: percent).compress(chunk) == nil)
        #expect(HistoryCompressor(maxFramePercent: percent + 1).compress(chunk)?.count == size)
        #expect(HistoryCompressor().compress([]) == nil)
    }

    /// A fixed input at a fixed level: the output is the input, the frame is well under a quarter
    /// of it, and its header has the pinned shape (no compressed bytes hard-coded: they belong to
    /// the libzstd version).
    @Test func fixedVector() throws {
        let sentence = Array("Pack my box with five dozen liquor jugs; the quick brown fox jumps over the lazy dog. ".utf8)
        var input: [UInt8] = []
        for i in 0..<200 { input += sentence + Array("line \(i * 7919 % 1000)\n".utf8) }
        input = Array(input.prefix(16_384))
        let history = Array(repeating: sentence, count: 40).flatMap { $0 }
        let compressor = HistoryCompressor(level: 3), decompressor = HistoryDecompressor()
        _ = compressor.compress(history)
        decompressor.appendRaw(history)
        let frame = try #require(compressor.compress(input))
        #expect(frame.count < input.count / 4)
        #expect(Array(frame.prefix(4)) == littleEndian(UInt32(ZSTD_MAGICNUMBER)))
        let descriptor = frame[descriptorIndex]
        #expect(descriptor & checksumBit == 0, "no checksum")
        #expect(descriptor & 0x03 == 0, "no dictionary id")
        #expect(descriptor >> 6 == 1, "content size stated, in 2 bytes")
        #expect(descriptor & singleSegmentBit != 0, "window = the stated content size")
        #expect(ZSTD_getFrameContentSize(frame, frame.count) == UInt64(input.count))
        #expect(try decompressor.decompress(frame, expectedSize: input.count) == input)
    }
}
