/// The window a zstd frame asks for, read from its header as RFC 8878 §3.1.1.1 lays it out.
///
/// libzstd applies `ZSTD_d_windowLogMax` only when it streams (it has to allocate the window);
/// one-shot decoding into a chunk-sized buffer never checks it. The receiver still refuses frames
/// that ask for more than `ChunkFrameLimits.windowLog`, so it reads the window itself. The header
/// layout is fixed by the RFC, unlike libzstd's experimental `ZSTD_getFrameHeader` structure.
enum FrameWindow {
    /// Byte 4, after the magic: the frame header descriptor.
    private static let descriptorOffset = 4
    /// Set when the frame is one segment: no window descriptor, the window is the content size.
    private static let singleSegmentFlag: UInt8 = 0x20

    /// The window size in bytes of `frame`, whose magic and complete header the caller has
    /// already checked (`ZSTD_getFrameContentSize` gave `contentSize`); nil if the header is cut.
    static func size(of frame: UnsafeRawBufferPointer, contentSize: UInt64) -> UInt64? {
        guard frame.count > descriptorOffset + 1 else { return nil }
        if frame[descriptorOffset] & singleSegmentFlag != 0 { return contentSize }
        // The window descriptor: exponent (5 bits) and mantissa (3 bits) of 2^(10+exponent) × (1 + mantissa/8).
        let descriptor = frame[descriptorOffset + 1]
        let base = UInt64(1) << (10 + UInt64(descriptor >> 3))
        return base + base / 8 * UInt64(descriptor & 0x07)
    }
}
