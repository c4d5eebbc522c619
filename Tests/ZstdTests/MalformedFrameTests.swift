import CZstd
import Testing
import Zstd

/// Frames a hostile (but authenticated) sender could send. Each gives its typed error, never a
/// crash, and leaves the decompressor's history as it was.
@Suite struct MalformedFrameTests {
    static let chunk = textBytes(ChunkFrameLimits.maxChunk, seed: 40)

    /// A decompressor with some history and a good frame for `chunk` against that history.
    static func setUp() throws -> (HistoryDecompressor, frame: [UInt8]) {
        let history = textBytes(30_000, seed: 41)
        let compressor = HistoryCompressor(), decompressor = HistoryDecompressor()
        _ = compressor.compress(history)
        decompressor.appendRaw(history)
        return (decompressor, try #require(compressor.compress(chunk)))
    }

    /// Expects `frame` to be refused with `error`, and the history to be untouched.
    func expectRefused(_ frame: [UInt8], expectedSize: Int = chunk.count, _ error: DecompressionError,
                       by decompressor: HistoryDecompressor? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let decompressor = try decompressor ?? Self.setUp().0
        let before = decompressor.history
        #expect(throws: error, sourceLocation: sourceLocation) {
            try decompressor.decompress(frame, expectedSize: expectedSize)
        }
        #expect(decompressor.history == before, sourceLocation: sourceLocation)
    }

    @Test func everyTruncationIsRefused() throws {
        let (decompressor, frame) = try Self.setUp()
        for length in 0..<frame.count {
            let before = decompressor.history
            do {
                _ = try decompressor.decompress(Array(frame.prefix(length)), expectedSize: Self.chunk.count)
                Issue.record("a frame cut to \(length) of \(frame.count) bytes was accepted")
            } catch {
                let allowed: [DecompressionError] = length < 4 ? [.notZstdFrame] : [.corrupt]
                #expect(allowed.contains(error), "cut to \(length): \(error)")
            }
            #expect(decompressor.history == before)
        }
        // The decompressor is still usable: the whole frame decodes afterwards.
        #expect(try decompressor.decompress(frame, expectedSize: Self.chunk.count) == Self.chunk)
    }

    /// Without a checksum a flipped bit in the contents may decode to other bytes of the right
    /// length (the record layer's authentication is what catches tampering); it must never crash
    /// or produce another length. Every bit of the header, one bit of each byte after it.
    @Test func bitFlipsAreRefusedOrDecodeToTheStatedLength() throws {
        let (decompressor, frame) = try Self.setUp()
        let history = decompressor.history
        var refused = 0
        let flips = (0..<min(32, frame.count)).flatMap { index in (0..<8).map { (index, $0) } }
            + (32..<frame.count).map { ($0, $0 % 8) }
        for (index, bit) in flips {
            var flipped = frame
            flipped[index] ^= 1 << bit
            do {
                let output = try decompressor.decompress(flipped, expectedSize: Self.chunk.count)
                #expect(output.count == Self.chunk.count)
                decompressor.reset()   // an accepted flip added to the history: put it back
                decompressor.appendRaw(history)
            } catch {
                refused += 1
            }
        }
        #expect(refused > 0)
        for bit in 0..<8 {
            var flipped = frame
            flipped[1] ^= 1 << bit
            try expectRefused(flipped, .notZstdFrame)
        }
    }

    @Test func bytesAfterTheFrameAreRefused() throws {
        let (_, frame) = try Self.setUp()
        try expectRefused(frame + [0], .trailingBytes)
        try expectRefused(frame + frame, .trailingBytes)
        try expectRefused(frame + skippableFrame([1, 2, 3]), .trailingBytes)
        try expectRefused(frame + rawFrame([]), .trailingBytes)
    }

    @Test func anythingButAZstdFrameIsRefused() throws {
        try expectRefused([], expectedSize: 0, .notZstdFrame)
        try expectRefused([0x28, 0xB5, 0x2F], .notZstdFrame)
        try expectRefused(skippableFrame(Array(repeating: 0, count: 100)), .notZstdFrame)
        try expectRefused(skippableFrame([]), expectedSize: 0, .notZstdFrame)
        let (_, frame) = try Self.setUp()
        try expectRefused(skippableFrame([7]) + frame, .notZstdFrame)
        // zstd v0.7's magic: libzstd may carry legacy decoders; they are never reached.
        try expectRefused(littleEndian(0xFD2F_B527) + Array(frame.dropFirst(4)), .notZstdFrame)
        try expectRefused(randomBytes(300, seed: 42), .notZstdFrame)
    }

    @Test func aFrameWithoutContentSizeIsRefused() throws {
        try expectRefused(rawFrame(Self.chunk, contentSize: false), .contentSizeMissing)
    }

    @Test func statedSizesMustMatchAndStayWithinTheLimit() throws {
        let frame = rawFrame(Self.chunk)
        #expect(try HistoryDecompressor().decompress(frame, expectedSize: Self.chunk.count) == Self.chunk)
        try expectRefused(frame, expectedSize: Self.chunk.count - 1, .contentSizeMismatch)
        try expectRefused(rawFrame(Array(Self.chunk.prefix(1000))), .contentSizeMismatch)
        let oversized = textBytes(ChunkFrameLimits.maxChunk + 1, seed: 43)
        try expectRefused(rawFrame(oversized), expectedSize: oversized.count, .tooLarge)
        try expectRefused(rawFrame(oversized), .tooLarge)
        try expectRefused(frame, expectedSize: ChunkFrameLimits.maxChunk, .tooLarge,
                          by: HistoryDecompressor(maxChunk: 1000))
    }

    /// A small frame made at window log 27 is single-segment, so its window is its stated size
    /// and it is harmless; the same frame stating a 128 MiB window is refused before decoding.
    @Test func aFrameAskingForALargerWindowIsRefused() throws {
        let frame = rawFrame(Self.chunk, windowLog: 27)
        #expect(try HistoryDecompressor().decompress(frame, expectedSize: Self.chunk.count) == Self.chunk)
        try expectRefused(withWindowDescriptor(frame, windowLog: 27), .windowTooLarge)
        try expectRefused(withWindowDescriptor(frame, windowLog: 18), .windowTooLarge)
        let atTheLimit = withWindowDescriptor(frame, windowLog: Int(ChunkFrameLimits.windowLog))
        #expect(try HistoryDecompressor().decompress(atTheLimit, expectedSize: Self.chunk.count) == Self.chunk)
    }

    @Test func aFrameNamingADictionaryIsRefused() throws {
        try expectRefused(withDictionaryID(rawFrame(Self.chunk), id: 7), .namesDictionary)
    }

    @Test func aChecksummedFrameStillDecodes() throws {
        // Not what the compressor makes, but harmless: libzstd checks the checksum too.
        let frame = rawFrame(Self.chunk, checksum: true)
        #expect(try HistoryDecompressor().decompress(frame, expectedSize: Self.chunk.count) == Self.chunk)
        var flipped = frame
        flipped[flipped.count - 1] ^= 1
        try expectRefused(flipped, .corrupt)
    }

    @Test func anEmptyChunkIsAValidFrame() throws {
        #expect(try HistoryDecompressor().decompress(rawFrame([]), expectedSize: 0) == [])
    }

    /// 16 MiB of zeros is a frame of a few hundred bytes. Stating its size, it is refused from the
    /// header; without a size, likewise; lying that it holds one chunk, libzstd stops when the
    /// chunk-sized output is full. No output beyond `maxChunk` ever exists.
    @Test func aZstdBombIsRefusedWithoutDecodingIt() throws {
        let zeros = [UInt8](repeating: 0, count: 16 << 20)
        let bomb = rawFrame(zeros, level: 1)
        #expect(bomb.count < 2_000)
        try expectRefused(bomb, .tooLarge)
        try expectRefused(bomb, expectedSize: ChunkFrameLimits.maxChunk, .tooLarge)
        try expectRefused(rawFrame(zeros, level: 1, windowLog: 27, contentSize: false), .contentSizeMissing)
        // Lying about its size, its 512 KiB window gives it away.
        try expectRefused(withStatedSize(bomb, ChunkFrameLimits.maxChunk), expectedSize: ChunkFrameLimits.maxChunk, .windowTooLarge)
        // A lie that passes every header check (a one-segment frame of 60 000 zeros that states
        // 16 384): libzstd fills the chunk-sized buffer and stops.
        let over = rawFrame([UInt8](repeating: 0, count: 60_000), level: 1)
        try expectRefused(withStatedSize(over, ChunkFrameLimits.maxChunk), expectedSize: ChunkFrameLimits.maxChunk, .decodedSizeMismatch)
    }

    /// A receiver whose history is not the sender's (it missed a reset, or a chunk) cannot decode
    /// frames that reach into it; it is an error or other bytes, never a crash.
    @Test func aFrameReachingPastTheHistoryIsRefused() throws {
        let (decompressor, frame) = try Self.setUp()
        decompressor.reset()
        #expect(throws: DecompressionError.corrupt) { try decompressor.decompress(frame, expectedSize: Self.chunk.count) }
    }

    @Test func codesAreStable() {
        let all: [DecompressionError] = [.notZstdFrame, .contentSizeMissing, .tooLarge, .contentSizeMismatch, .namesDictionary,
                                         .windowTooLarge, .trailingBytes, .corrupt, .decodedSizeMismatch]
        #expect(all.map(\.code) == ["notZstdFrame", "contentSizeMissing", "tooLarge", "contentSizeMismatch", "namesDictionary",
                                    "windowTooLarge", "trailingBytes", "corrupt", "decodedSizeMismatch"])
    }
}
