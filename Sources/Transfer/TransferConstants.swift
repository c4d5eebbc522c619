/// Transfer-layer constants, named as in docs/protocol.md.
public enum TransferConstants {
    /// File bytes a sender may have sent beyond the receiver's last `ack`.
    public static let transferWindow: UInt64 = 262_144
    /// The receiver sends `ack` at least this often (in file bytes).
    public static let ackInterval: UInt64 = 32_768
    /// A receiver checkpoints a partial file (`IncomingFile.checkpoint`) after this many new
    /// bytes, and when its link drops: the most a power cut makes it receive again.
    public static let checkpointInterval: UInt64 = 262_144
    /// Largest `data` payload a sender produces.
    public static let maxDataPerRecord = 4_096
    /// Most file bytes one `zdata` message stands for, and the longest zstd frame it may carry.
    public static let maxCompressedChunk = 16_384
    /// Longest `batch` blesend sends (a receiver takes any record-sized one).
    public static let maxBatchLength = 4_096
    /// Longest file name in an offer, in UTF-8 bytes.
    public static let maxNameLength = 255
    /// Most components in a path inside a sent folder (the folder's own name counts as one).
    public static let maxPathDepth = 32
    /// Longest path inside a sent folder, in UTF-8 bytes as it travels (separators included).
    public static let maxPathLength = 1_024
    /// `offer.size` value meaning "unknown: a stream".
    public static let unknownSize = UInt64.max
    /// Length of a transfer id and of the content hash.
    public static let idLength = 16
    public static let hashLength = 32
    /// The longest wait a `busy` message may ask for, in seconds (§8.6); at least 1.
    public static let maxBusyRetryAfter: UInt16 = 3600
}
