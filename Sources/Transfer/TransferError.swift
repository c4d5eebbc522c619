/// Why the transfer layer stopped a session.
public enum TransferError: Error, Equatable, Sendable {
    /// The peer sent a message that is not allowed at this point.
    case protocolViolation(String)
    /// The sender sent more bytes than it offered.
    case moreBytesThanOffered
    /// The receiver asked to resume at an offset the sender never reached, or one a stream has forgotten.
    case cannotResume(offset: UInt64)
    /// The local file could not be read, or changed size while it was being sent.
    case sourceFailed(String)
}

/// How one file ended badly (the session may go on with the next file).
public enum FileFailure: Error, Equatable, Sendable {
    /// The bytes that arrived do not hash to what the sender computed.
    case integrity
    /// The receiver could not store the file (disk full, permissions, …).
    case couldNotStore(String)
    /// The receiver refused the offer.
    case rejected(TransferMessage.RejectReason)
}
