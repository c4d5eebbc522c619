/// Why `HistoryDecompressor` refused a frame. The sender is authenticated, so each of these means
/// it broke the rules (or is hostile): nothing here is retried. Tests and logs match on `code`.
public enum DecompressionError: Error, Equatable, Sendable {
    /// The bytes do not start with the zstd frame magic: empty, garbage, a skippable frame or a
    /// legacy-format frame (libzstd's legacy decoders are never reached).
    case notZstdFrame
    /// The frame header does not state the original size, so the output cannot be bounded up front.
    case contentSizeMissing
    /// The expected or the stated original size is above `maxChunk`.
    case tooLarge
    /// The header states an original size other than the one the message announced.
    case contentSizeMismatch
    /// The header names a dictionary; frames here only use the history as a prefix.
    case namesDictionary
    /// The frame asks for a larger window than `ChunkFrameLimits.windowLog` allows.
    case windowTooLarge
    /// Bytes follow the end of the frame: a second frame, a skippable frame, or padding.
    case trailingBytes
    /// The frame is truncated or its contents do not decode.
    case corrupt
    /// The frame decoded to a length other than the one it stated.
    case decodedSizeMismatch
}

extension DecompressionError {
    /// A stable, machine-readable name: the case name.
    public var code: String {
        switch self {
        case .notZstdFrame: "notZstdFrame"
        case .contentSizeMissing: "contentSizeMissing"
        case .tooLarge: "tooLarge"
        case .contentSizeMismatch: "contentSizeMismatch"
        case .namesDictionary: "namesDictionary"
        case .windowTooLarge: "windowTooLarge"
        case .trailingBytes: "trailingBytes"
        case .corrupt: "corrupt"
        case .decodedSizeMismatch: "decodedSizeMismatch"
        }
    }
}
