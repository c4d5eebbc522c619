/// The shape of the zstd frames that carry file chunks, fixed on both sides so that the receiver
/// can bound what a frame may ask of it.
///
/// Each chunk of a file becomes one independent zstd frame that references, as a raw-content
/// prefix, the newest original bytes of the same file sent before it. A frame never depends on an
/// earlier frame, only on earlier bytes, so every chunk may go compressed or raw and both sides
/// still keep the same history.
public enum ChunkFrameLimits {
    /// Largest chunk of original bytes one frame carries.
    public static let maxChunk = 16_384
    /// Original bytes both sides keep as the prefix of the next frame (the newest ones).
    public static let historyLimit = 65_536
    /// The compressor's window, and the largest window the decompressor accepts: 128 KiB holds the
    /// whole history plus a whole chunk, so every match the compressor can find is in reach.
    public static let windowLog: Int32 = 17
    /// A frame is sent only if it is at most this percentage of the chunk; otherwise the chunk
    /// goes raw, so compression never costs more than the raw message would.
    public static let maxFramePercent = 99
}
