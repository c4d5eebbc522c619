/// What the transfer layer is handed to compress file chunks before they are sealed, and to undo
/// it on the other side. The core links no C: the session hands in zstd (Sources/Zstd), as it
/// hands in the BLAKE2b `ContentHasher`.
///
/// Both sides keep a history of the newest original bytes of the current file on this
/// connection, and every chunk joins it whether it went compressed or raw, so each chunk can be
/// sent either way on its own. The sender's `ChunkEncoder` and the receiver's `ChunkDecoder`
/// apply them.

/// The sender's half.
public protocol ChunkCompressor {
    /// The compressed form of `chunk` when it is worth sending, nil to send the chunk raw. Either
    /// way the chunk joins the history.
    mutating func compress(_ chunk: [UInt8]) -> [UInt8]?
    /// Forgets the history: a new file, a new connection, or a resume point.
    mutating func reset()
}

/// The receiver's half.
public protocol ChunkDecompressor {
    /// The chunk `compressed` encodes, exactly `expectedSize` bytes, which then joins the history.
    /// Refuses, without allocating more than the chunk, anything that is not such a chunk.
    mutating func decompress(_ compressed: [UInt8], expectedSize: Int) throws(ChunkDecompressionError) -> [UInt8]
    /// Adds a chunk that arrived raw to the history.
    mutating func appendRaw(_ chunk: [UInt8])
    /// Forgets the history: a new file, a new connection, or a resume point.
    mutating func reset()
}

/// Why the receiver refused a compressed chunk: the sender broke the protocol.
public struct ChunkDecompressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The reason; the raw value is the stable name logs and tests see. `zdata` carries one zstd
    /// frame (docs/protocol.md §8), so the codes are zstd's (`Zstd.DecompressionError`).
    public enum Code: String, Sendable, Hashable {
        /// Not a zstd frame (a skippable or legacy frame, or no magic number).
        case notZstdFrame
        /// The frame does not state its original size.
        case contentSizeMissing
        /// The frame states more than a chunk may hold.
        case tooLarge
        /// The frame states another size than the `zdata` message declares.
        case contentSizeMismatch
        /// The frame names a dictionary.
        case namesDictionary
        /// The frame asks for a larger window than a chunk needs.
        case windowTooLarge
        /// Bytes follow the frame.
        case trailingBytes
        /// The frame is truncated or its contents do not decode.
        case corrupt
        /// The frame decoded to another length than it stated.
        case decodedSizeMismatch
        /// The decompressor returned another number of bytes than the message declares (the
        /// receiver's own check, whatever the decompressor).
        case sizeMismatch
    }

    public var code: Code

    public init(code: Code) {
        self.code = code
    }

    public var description: String { code.rawValue }
}
