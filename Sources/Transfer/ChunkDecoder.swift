/// File bytes as a `data` or `zdata` message carries them.
enum IncomingChunk: Equatable {
    case raw([UInt8])
    case compressed(originalSize: Int, frame: [UInt8])

    /// The file bytes it stands for (declared, for a compressed chunk).
    var count: Int {
        switch self {
        case .raw(let bytes): bytes.count
        case .compressed(let originalSize, _): originalSize
        }
    }

    var kind: TransferMessage.Kind {
        if case .raw = self { .data } else { .zdata }
    }
}

/// The receiver's chunk transform: the file bytes of each chunk, with the decompressor's history
/// kept in step with the sender's (every raw chunk joins it too while compression is granted).
/// Without a decompressor it passes raw chunks through, and no compressed chunk decodes.
struct ChunkDecoder {
    private var decompressor: (any ChunkDecompressor)?

    init(decompressor: (any ChunkDecompressor)?) {
        self.decompressor = decompressor
    }

    /// Whether compressed chunks can be decoded here (the receiver may grant `compression`).
    var decompresses: Bool { decompressor != nil }

    /// Forgets the history: every accepted offer starts it afresh on both sides.
    mutating func reset() { decompressor?.reset() }

    /// The bytes `chunk` stands for; `compressing`: compression is granted on this connection.
    mutating func decode(_ chunk: IncomingChunk, compressing: Bool) throws(ChunkDecompressionError) -> [UInt8] {
        switch chunk {
        case .raw(let bytes):
            if compressing { decompressor?.appendRaw(bytes) }
            return bytes
        case .compressed(let originalSize, let frame):
            let bytes = try decompressor?.decompress(frame, expectedSize: originalSize) ?? []
            guard bytes.count == originalSize else { throw ChunkDecompressionError(code: .sizeMismatch) }
            return bytes
        }
    }
}
