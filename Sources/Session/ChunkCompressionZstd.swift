import Transfer
import Zstd

/// The transfer layer's chunk compression: zstd with the file's history as a prefix.
/// Each value holds a reference to its libzstd context and history: copies share them.
struct ZstdChunkCompressor: ChunkCompressor {
    private let compressor: HistoryCompressor

    init(level: Int32 = HistoryCompressor.defaultLevel) {
        compressor = HistoryCompressor(level: level)
    }

    func compress(_ chunk: [UInt8]) -> [UInt8]? { compressor.compress(chunk) }
    func reset() { compressor.reset() }
}

/// The receiver's half, with zstd's refusals carried by their codes.
struct ZstdChunkDecompressor: ChunkDecompressor {
    private let decompressor = HistoryDecompressor()

    func decompress(_ compressed: [UInt8], expectedSize: Int) throws(ChunkDecompressionError) -> [UInt8] {
        do {
            return try decompressor.decompress(compressed, expectedSize: expectedSize)
        } catch {
            throw ChunkDecompressionError(code: Self.code(of: error))
        }
    }

    static func code(of error: DecompressionError) -> ChunkDecompressionError.Code {
        switch error {
        case .notZstdFrame: .notZstdFrame
        case .contentSizeMissing: .contentSizeMissing
        case .tooLarge: .tooLarge
        case .contentSizeMismatch: .contentSizeMismatch
        case .namesDictionary: .namesDictionary
        case .windowTooLarge: .windowTooLarge
        case .trailingBytes: .trailingBytes
        case .corrupt: .corrupt
        case .decodedSizeMismatch: .decodedSizeMismatch
        }
    }

    func appendRaw(_ chunk: [UInt8]) { decompressor.appendRaw(chunk) }
    func reset() { decompressor.reset() }
}
