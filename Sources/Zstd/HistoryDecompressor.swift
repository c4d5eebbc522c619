import CZstd

/// The receiver's half: turns one frame from `HistoryCompressor` back into its chunk, using the
/// same history as the sender, and refuses anything that could make it allocate or write more
/// than the chunk the message announced.
///
/// The sender is authenticated but may still be hostile, so a frame is checked before libzstd
/// decodes it: the zstd magic (no skippable or legacy frames), an original size stated in the
/// header, equal to `expectedSize` and at most `maxChunk`, no dictionary id, exactly one frame
/// and nothing after it. The output buffer is `expectedSize` bytes, allocated only after those
/// checks, and libzstd decodes straight into it (one-shot decoding keeps no window buffer of its
/// own). Frames stating a window above `ChunkFrameLimits.windowLog` are refused too, though
/// one-shot decoding would not allocate it: they are not what `HistoryCompressor` makes. A zstd
/// bomb therefore costs at most `maxChunk` bytes of output and the time to read its header.
///
/// A class because it owns a libzstd context (freed with it); not for use from two threads at once.
public final class HistoryDecompressor {
    public let maxChunk: Int
    private var storage: ChunkHistory
    private let context: OpaquePointer

    /// `historyLimit` must be the sender's (at most 64 KiB), and `maxChunk` fit in the window (a
    /// one-segment frame's window is its size): the programmer's choices, so other values stop
    /// the program.
    public init(historyLimit: Int = ChunkFrameLimits.historyLimit, maxChunk: Int = ChunkFrameLimits.maxChunk) {
        precondition((0...ChunkFrameLimits.historyLimit).contains(historyLimit), "history limit must be 0...64 KiB")
        precondition((0...(1 << Int(ChunkFrameLimits.windowLog))).contains(maxChunk), "maxChunk must fit in the window")
        guard let context = ZSTD_createDCtx() else { fatalError("ZSTD_createDCtx: out of memory") }
        self.context = context
        self.maxChunk = maxChunk
        storage = ChunkHistory(limit: historyLimit)
        // Only streaming honours this (see FrameWindow); set anyway, should decoding ever stream.
        LibZstd.require(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, ChunkFrameLimits.windowLog), "window log max")
    }

    deinit { ZSTD_freeDCtx(context) }

    /// The original bytes the next frame may reference (the newest, at most `historyLimit`).
    public var history: [UInt8] { storage.bytes }

    /// The chunk `frame` encodes, which must be exactly `expectedSize` bytes (at most `maxChunk`).
    /// On success the chunk joins the history; on failure nothing changes.
    public func decompress(_ frame: [UInt8], expectedSize: Int) throws(DecompressionError) -> [UInt8] {
        precondition(expectedSize >= 0, "a chunk size is a byte count")
        guard expectedSize <= maxChunk else { throw .tooLarge }
        if let refusal = frame.withUnsafeBytes({ refusal(of: $0, expectedSize: expectedSize) }) { throw refusal }

        var result = 0
        let chunk = [UInt8](unsafeUninitializedCapacity: expectedSize) { output, initialized in
            result = storage.bytes.withUnsafeBytes { prefix in
                frame.withUnsafeBytes { input in
                    // As the compressor: a new frame after any failed one (parameters stay), and
                    // the prefix always set, even empty, as it counts for one frame only.
                    ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
                    let prefixSet = ZSTD_DCtx_refPrefix(context, prefix.baseAddress, prefix.count)
                    if LibZstd.isError(prefixSet) { return prefixSet }
                    return ZSTD_decompressDCtx(context, output.baseAddress, expectedSize, input.baseAddress, input.count)
                }
            }
            initialized = LibZstd.isError(result) ? 0 : result
        }
        if LibZstd.isError(result) {
            switch LibZstd.errorCode(result) {
            case ZSTD_error_frameParameter_windowTooLarge: throw .windowTooLarge
            case ZSTD_error_dstSize_tooSmall: throw .decodedSizeMismatch
            default: throw .corrupt
            }
        }
        guard result == expectedSize else { throw .decodedSizeMismatch }
        storage.append(chunk)
        return chunk
    }

    /// Adds a chunk that arrived raw to the history, as the sender did when it chose not to compress it.
    public func appendRaw(_ chunk: [UInt8]) {
        storage.append(chunk)
    }

    /// Forgets the history: a new file, a new connection, or a resume point.
    public func reset() {
        storage.reset()
    }

    /// Why `frame` is refused before decoding, or nil. Everything that bounds the output is
    /// settled here, before any buffer exists, reading only the header and the block headers.
    private func refusal(of frame: UnsafeRawBufferPointer, expectedSize: Int) -> DecompressionError? {
        guard frame.count >= 4, let base = frame.baseAddress,
              UInt32(littleEndian: frame.loadUnaligned(as: UInt32.self)) == UInt32(ZSTD_MAGICNUMBER)
        else { return .notZstdFrame }
        let contentSize = ZSTD_getFrameContentSize(base, frame.count)
        switch contentSize {
        case Self.contentSizeError: return .corrupt
        case Self.contentSizeUnknown: return .contentSizeMissing
        case let size where size > UInt64(maxChunk): return .tooLarge
        case let size where size != UInt64(expectedSize): return .contentSizeMismatch
        default: break
        }
        guard let window = FrameWindow.size(of: frame, contentSize: contentSize) else { return .corrupt }
        guard window <= UInt64(1) << ChunkFrameLimits.windowLog else { return .windowTooLarge }
        guard ZSTD_getDictID_fromFrame(base, frame.count) == 0 else { return .namesDictionary }
        let frameSize = ZSTD_findFrameCompressedSize(base, frame.count)
        if LibZstd.isError(frameSize) { return .corrupt }
        return frameSize == frame.count ? nil : .trailingBytes
    }

    /// `ZSTD_CONTENTSIZE_UNKNOWN` and `ZSTD_CONTENTSIZE_ERROR` (macros Swift does not import).
    private static let contentSizeUnknown = UInt64.max
    private static let contentSizeError = UInt64.max - 1
}
