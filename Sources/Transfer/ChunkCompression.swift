/// What the transfer layer is handed to compress file chunks before they are sealed, and to undo
/// it on the other side. The core links no C: the session hands in zstd (Sources/Zstd), as it
/// hands in the BLAKE2b `ContentHasher`.
///
/// Both sides keep a history of the newest original bytes of the current file on this
/// connection, and every chunk joins it whether it went compressed or raw, so each chunk can be
/// sent either way on its own.

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
public struct ChunkDecompressionError: Error, Equatable, Sendable {
    /// The decompressor's stable code for the reason (zstd: `DecompressionError.code`, such as
    /// "contentSizeMismatch"), for logs and tests; never prose.
    public var code: String

    public init(code: String) {
        self.code = code
    }
}
