import CZstd

/// The sender's half: compresses each chunk of a file as one independent zstd frame that uses the
/// newest original bytes sent before it as a prefix, and says whether the frame is worth sending.
///
/// A frame references earlier *bytes*, never earlier frames, so the caller may send any chunk raw
/// (when `compress` returns nil, or for any reason of its own) and the receiver's history still
/// matches: both sides append every chunk whichever way it went. Frames are pinned to what
/// `HistoryDecompressor` checks: window `ChunkFrameLimits.windowLog`, content size stated in the
/// header, no checksum (the records that carry them are already authenticated), no dictionary id.
///
/// A class because it owns a libzstd context (freed with it); not for use from two threads at once.
public final class HistoryCompressor {
    /// Measured with `blesend-bench compress` (docs/benchmarks.md): on text, ratio 3.85 at about
    /// 33 MB/s on one core, against at most ~0.18 MB/s on the air. From level 11 zstd searches
    /// with binary trees and runs 6–7 times slower for 1–2 % fewer bytes.
    public static let defaultLevel: Int32 = 9

    public let level: Int32
    /// `compress` returns a frame only if `frame.count * 100 <= chunk.count * maxFramePercent`.
    public let maxFramePercent: Int
    private var storage: ChunkHistory
    private let context: OpaquePointer

    /// `level` must be one libzstd offers (`ZSTD_minCLevel()...ZSTD_maxCLevel()`), `historyLimit`
    /// at most 64 KiB and the same as the receiver's, `maxFramePercent` in 1...100: the
    /// programmer's choices, so other values stop the program.
    public init(level: Int32 = defaultLevel, historyLimit: Int = ChunkFrameLimits.historyLimit,
                maxFramePercent: Int = ChunkFrameLimits.maxFramePercent) {
        precondition(level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel(), "not a zstd compression level")
        precondition((0...ChunkFrameLimits.historyLimit).contains(historyLimit), "history limit must be 0...64 KiB")
        precondition((1...100).contains(maxFramePercent), "maxFramePercent must be 1...100")
        guard let context = ZSTD_createCCtx() else { fatalError("ZSTD_createCCtx: out of memory") }
        self.context = context
        self.level = level
        self.maxFramePercent = maxFramePercent
        storage = ChunkHistory(limit: historyLimit)
        // Parameters stay set for every frame of this context; only the prefix is per frame.
        LibZstd.require(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level), "compression level")
        LibZstd.require(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, ChunkFrameLimits.windowLog), "window log")
        LibZstd.require(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1), "content size flag")
        LibZstd.require(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0), "checksum flag")
        LibZstd.require(ZSTD_CCtx_setParameter(context, ZSTD_c_dictIDFlag, 0), "dictionary id flag")
    }

    deinit { ZSTD_freeCCtx(context) }

    /// The original bytes the next frame will reference (the newest, at most `historyLimit`).
    public var history: [UInt8] { storage.bytes }

    /// The frame for `chunk` if it is at most `maxFramePercent` % of the chunk, else nil (send the
    /// chunk raw). Either way the chunk joins the history. A libzstd failure also gives nil: raw is
    /// always a correct choice.
    public func compress(_ chunk: [UInt8]) -> [UInt8]? {
        defer { storage.append(chunk) }
        // The output buffer holds exactly the largest frame that pays: libzstd stops with
        // "destination too small" as soon as a frame would not, so a chunk that does not compress
        // costs no larger buffer and no copy.
        let capacity = chunk.count * maxFramePercent / 100
        guard capacity > 0 else { return nil }
        var failed = false
        let frame = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            let result = storage.bytes.withUnsafeBytes { prefix in
                chunk.withUnsafeBytes { input in
                    // A frame that did not fit leaves the context mid-frame, where it refuses a
                    // prefix: start a new frame (parameters stay). Then always set the prefix, even
                    // empty: it counts for one frame only, and nothing must be left from a failed one.
                    ZSTD_CCtx_reset(context, ZSTD_reset_session_only)
                    let prefixSet = ZSTD_CCtx_refPrefix(context, prefix.baseAddress, prefix.count)
                    if LibZstd.isError(prefixSet) { return prefixSet }
                    return ZSTD_compress2(context, output.baseAddress, capacity, input.baseAddress, input.count)
                }
            }
            failed = LibZstd.isError(result)
            initialized = failed ? 0 : result
        }
        return failed ? nil : frame
    }

    /// Forgets the history: a new file, a new connection, or a resume point.
    public func reset() {
        storage.reset()
    }
}
