import Testing
import Transfer
@testable import Session

/// The adapters the session will hand to the transfer layer: zstd behind `ChunkCompressor` and
/// `ChunkDecompressor`, used through the protocols only, as the core will.
@Suite struct ChunkCompressionZstdTests {
    static let text = Array(String(repeating: "every chunk joins the history, compressed or raw; ", count: 700).utf8)

    @Test func chunksRoundTripThroughTheProtocols() throws {
        var compressor: any ChunkCompressor = ZstdChunkCompressor()
        var decompressor: any ChunkDecompressor = ZstdChunkDecompressor()
        var received: [UInt8] = []
        for start in stride(from: 0, to: Self.text.count, by: 10_000) {
            let chunk = Array(Self.text[start..<min(start + 10_000, Self.text.count)])
            if let frame = compressor.compress(chunk) {
                received += try decompressor.decompress(frame, expectedSize: chunk.count)
            } else {
                decompressor.appendRaw(chunk)
                received += chunk
            }
        }
        #expect(received == Self.text)
        compressor.reset()
        decompressor.reset()
        let chunk = Array(Self.text.prefix(5_000))
        let compressed = compressor.compress(chunk)
        let frame = try #require(compressed)
        #expect(try decompressor.decompress(frame, expectedSize: chunk.count) == chunk)
    }

    @Test func refusalsCarryTheZstdCode() throws {
        var decompressor: any ChunkDecompressor = ZstdChunkDecompressor()
        #expect(throws: ChunkDecompressionError(code: .notZstdFrame)) { try decompressor.decompress([1, 2, 3, 4, 5], expectedSize: 5) }
        let compressor = ZstdChunkCompressor()
        let frame = try #require(compressor.compress(Array(Self.text.prefix(9_000))))
        #expect(throws: ChunkDecompressionError(code: .contentSizeMismatch)) { try decompressor.decompress(frame, expectedSize: 8_999) }
        #expect(throws: ChunkDecompressionError(code: .tooLarge)) { try decompressor.decompress(frame, expectedSize: 1 << 20) }
    }
}
