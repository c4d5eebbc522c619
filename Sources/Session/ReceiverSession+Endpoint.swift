import Pipeline

/// First contact (docs/protocol.md §8.5): what the receiver's user answered about an unknown sender.
public enum FirstContactAnswer: Equatable, Sendable {
    /// Trust the sender under `name` (its key is already in the trust directory).
    case approve(name: String)
    case decline
}

/// The receiver as the drivers see it (`DatagramEndpoint`): settled once the connection is
/// complete (goodbye exchanged, or a refusal delivered), done once its sender said goodbye; its
/// user's answer to a first-contact question is an input.
extension ReceiverSession: DatagramEndpoint {
    public typealias Failure = SessionError

    public var status: ConnectionStatus {
        if connectionComplete { return .settled }
        return senderSaidGoodbye ? .done : .running
    }

    public mutating func linkResized(maxDatagramSize: Int, peerMaxDatagramSize: Int) {
        setMaxDatagramSize(maxDatagramSize, peer: peerMaxDatagramSize)
    }

    /// The user's answer about the sender being asked about; nothing if nobody is asked any more.
    public mutating func take(_ answer: FirstContactAnswer, now: Instant) throws(SessionError) {
        guard isAwaitingApproval else { return }
        switch answer {
        case .approve(let name): try approve(name: name, now: now)
        case .decline: try decline(now: now)
        }
    }
}
