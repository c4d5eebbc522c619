/// Why a datagram or a sequence of fragments was refused.
public enum FramingError: Error, Equatable, Sendable {
    // One datagram (FrameCodec). The link drops and counts these.
    /// Shorter than the smallest frame of its kind.
    case truncated
    /// The CRC-16 does not match.
    case badCRC
    /// An ack frame with `S` or `E` set.
    case reservedBits
    /// An ack frame whose bitmap is over 512 bytes, or a start frame announcing length 0.
    case badLength
    /// A data frame without fragment bytes.
    case emptyFragment

    // A sequence of fragments (MessageReassembler). Only a broken or hostile peer sends these;
    // the link ends the connection.
    /// A continuation fragment while no message is open.
    case continuationWithoutStart
    /// A start fragment while a message is still open.
    case startInsideMessage
    /// More bytes than the start fragment announced.
    case messageOverrun
    /// The end flag came before the announced length was reached, or the length was reached without it.
    case lengthMismatch
    /// A start fragment announcing more than the receiver's limit.
    case messageTooLarge(length: Int, limit: Int)
}

extension FramingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .truncated: "a frame shorter than its kind allows"
        case .badCRC: "a frame with a bad CRC"
        case .reservedBits: "an ack frame with reserved bits set"
        case .badLength: "a frame with a bad length"
        case .emptyFragment: "a data frame without fragment bytes"
        case .continuationWithoutStart: "a continuation fragment with no message open"
        case .startInsideMessage: "a start fragment while a message was open"
        case .messageOverrun: "more bytes than the message announced"
        case .lengthMismatch: "a message whose end flag and length disagree"
        case .messageTooLarge(let length, let limit): "a message of \(length) bytes (limit \(limit))"
        }
    }
}
