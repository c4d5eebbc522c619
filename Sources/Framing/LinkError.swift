/// Errors a `ReliableLink` reports to the layer above.
public enum LinkError: Error, Equatable, Sendable {
    /// `send(message:)` got more than `maxMessageLength` bytes.
    case messageTooLarge
    /// `send(message:)` got zero bytes.
    case emptyMessage
    /// The oldest unacknowledged frame made no progress for `linkDeadAfter`. Sticky.
    case linkDead
    /// The peer sent something only a broken or hostile peer sends (which rule it broke). Sticky: the connection is over.
    case protocolViolation(FramingError)
}

extension LinkError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .messageTooLarge: "a message over the length limit"
        case .emptyMessage: "an empty message"
        case .linkDead: "no progress for too long"
        case .protocolViolation(let cause): "the peer sent \(cause)"
        }
    }
}
