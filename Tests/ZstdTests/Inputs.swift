import CZstd

/// Deterministic inputs and raw-libzstd frames for the tests: nothing depends on the run.

/// SplitMix64: a fixed stream of bytes for a given seed.
struct SeededBytes {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}

/// Incompressible bytes.
func randomBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SeededBytes(seed: seed)
    return generator.bytes(count)
}

/// Text-like bytes: words from a small vocabulary in an order that never repeats exactly, so it
/// compresses as prose does (well, and better with history) but not to nothing.
func textBytes(_ count: Int, seed: UInt64 = 2) -> [UInt8] {
    let words = ["the", "sender", "receiver", "chunk", "frame", "history", "window", "record", "bytes",
                 "compress", "zstd", "offset", "acknowledged", "Bluetooth", "file", "of", "and", "to",
                 "a", "is", "in", "that", "every", "session", "transfer", "key", "message", "link"]
    var generator = SeededBytes(seed: seed)
    var text: [UInt8] = []
    text.reserveCapacity(count + 16)
    while text.count < count {
        let roll = generator.next()
        text += Array(words[Int(roll % UInt64(words.count))].utf8)
        text.append(roll & 0xF0 == 0 ? UInt8(ascii: "\n") : UInt8(ascii: " "))
        if roll & 0x300 == 0 { text += Array(String(roll >> 50).utf8) + [UInt8(ascii: " ")] }
    }
    return Array(text.prefix(count))
}

/// Splits `bytes` into consecutive pieces of the given sizes, cycling through them.
func pieces(of bytes: [UInt8], sizes: [Int]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0, index = 0
    while start < bytes.count {
        let end = min(bytes.count, start + sizes[index % sizes.count])
        result.append(Array(bytes[start..<end]))
        start = end
        index += 1
    }
    return result
}

/// A frame made by libzstd directly, with parameters `HistoryCompressor` would never choose.
func rawFrame(_ input: [UInt8], level: Int32 = 3, windowLog: Int32 = 0, contentSize: Bool = true,
              checksum: Bool = false) -> [UInt8] {
    let context = ZSTD_createCCtx()
    defer { ZSTD_freeCCtx(context) }
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog)
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, contentSize ? 1 : 0)
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)
    let capacity = ZSTD_compressBound(input.count)
    var output = [UInt8](repeating: 0, count: capacity)
    let written = output.withUnsafeMutableBytes { out in
        input.withUnsafeBytes { ZSTD_compress2(context, out.baseAddress, capacity, $0.baseAddress, $0.count) }
    }
    precondition(ZSTD_isError(written) == 0, "raw libzstd compression failed")
    return Array(output.prefix(written))
}

/// A skippable frame (magic 0x184D2A50) carrying `payload`.
func skippableFrame(_ payload: [UInt8]) -> [UInt8] {
    littleEndian(UInt32(0x184D_2A50)) + littleEndian(UInt32(payload.count)) + payload
}

func littleEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

// MARK: - Frame header edits (RFC 8878 §3.1.1.1)

/// The frame header descriptor: byte 4, right after the magic.
let descriptorIndex = 4
let singleSegmentBit: UInt8 = 0x20
let checksumBit: UInt8 = 0x04

/// `frame` (single-segment, no dictionary id, 2-byte content size field) rewritten to state a
/// window of 2^`windowLog` bytes: the single-segment flag cleared and a window descriptor
/// inserted. The content size and the blocks are untouched.
func withWindowDescriptor(_ frame: [UInt8], windowLog: Int) -> [UInt8] {
    let descriptor = frame[descriptorIndex]
    precondition(descriptor & singleSegmentBit != 0 && descriptor & 0x03 == 0 && descriptor >> 6 == 1,
                 "expected a single-segment frame with a 2-byte content size and no dictionary id")
    let windowByte = UInt8((windowLog - 10) << 3)
    return Array(frame[..<descriptorIndex]) + [descriptor & ~singleSegmentBit, windowByte] + Array(frame[(descriptorIndex + 1)...])
}

/// `frame` (single-segment, no dictionary id) rewritten to name dictionary `id` (one byte).
func withDictionaryID(_ frame: [UInt8], id: UInt8) -> [UInt8] {
    let descriptor = frame[descriptorIndex]
    precondition(descriptor & singleSegmentBit != 0 && descriptor & 0x03 == 0, "expected a single-segment frame without dictionary id")
    return Array(frame[..<descriptorIndex]) + [descriptor | 0x01, id] + Array(frame[(descriptorIndex + 1)...])
}

/// `frame` (no dictionary id, a 2- or 4-byte content size field) rewritten to state `size` as
/// its content size: a frame that lies about how much it holds.
func withStatedSize(_ frame: [UInt8], _ size: Int) -> [UInt8] {
    let descriptor = frame[descriptorIndex]
    precondition(descriptor & 0x03 == 0, "expected a frame without dictionary id")
    let field = descriptorIndex + (descriptor & singleSegmentBit != 0 ? 1 : 2)
    var edited = frame
    switch descriptor >> 6 {
    case 1:
        precondition((256...65_791).contains(size))
        edited[field] = UInt8((size - 256) & 0xFF)
        edited[field + 1] = UInt8((size - 256) >> 8)
    case 2:
        for i in 0..<4 { edited[field + i] = UInt8(truncatingIfNeeded: size >> (8 * i)) }
    default:
        preconditionFailure("content size field of 0, 1 or 8 bytes not handled")
    }
    return edited
}
