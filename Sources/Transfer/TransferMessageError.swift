/// Why bytes are not a well-formed transfer message (docs/protocol.md §5).
public enum TransferMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownType, truncated, trailingBytes, emptyData, dataTooLarge, badName, badField
    /// A `batch` with no message in it.
    case emptyBatch

    /// What was wrong, in words for a log or an error message.
    public var description: String {
        switch self {
        case .unknownType: "a message of an unknown type"
        case .truncated: "a truncated message"
        case .trailingBytes: "a message with bytes after its last field"
        case .emptyData: "an empty data message"
        case .dataTooLarge: "a data message over \(TransferConstants.maxDataPerRecord) bytes (zdata: \(TransferConstants.maxCompressedChunk))"
        case .badName: "a stored name that is not valid UTF-8"
        case .badField: "a field with a value out of range"
        case .emptyBatch: "an empty batch message"
        }
    }
}
