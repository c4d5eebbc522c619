/// Why the transfer layer stopped a session.
public enum TransferError: Error, Equatable, Sendable {
    /// The peer sent a message that is not allowed at this point.
    case protocolViolation(String)
    /// The peer's message authenticated but is not a well-formed transfer message: the peer
    /// itself sent it, so there is no point in trying again.
    case malformedMessage(TransferMessageError)
    /// The sender sent more bytes than it offered.
    case moreBytesThanOffered
    /// The receiver asked to resume at an offset the sender never reached, or one a stream has forgotten.
    case cannotResume(offset: UInt64)
    /// The local file could not be read, or changed size while it was being sent.
    case sourceFailed(String)
}

extension TransferError: CustomStringConvertible {
    /// What went wrong, in words for a log or an error message.
    public var description: String {
        switch self {
        case .protocolViolation(let detail): detail
        case .malformedMessage(let error): "it sent \(error)"
        case .moreBytesThanOffered: "it sent more bytes than it offered"
        case .cannotResume(let offset): "it asked to resume at byte \(offset), which was never sent or is no longer available"
        case .sourceFailed(let detail): detail
        }
    }
}

/// How one file ended badly (the session may go on with the next file).
public enum FileFailure: Error, Equatable, Sendable {
    /// The bytes that arrived do not hash to what the sender computed.
    case integrity
    /// A record of the file failed authentication: tampered with or corrupted on the way.
    case tampered
    /// The sender broke the transfer rules while sending the file (receiver side).
    case senderBrokeProtocol(TransferError)
    /// The receiver could not store the file (disk full, permissions, …).
    case couldNotStore(String)
    /// The receiver refused the offer.
    case rejected(TransferMessage.RejectReason)
}
