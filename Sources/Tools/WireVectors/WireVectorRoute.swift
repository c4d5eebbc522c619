extension WireVector {
    /// Who sent a datagram and who got it.
    public enum Route: String, Equatable, Sendable, CaseIterable {
        /// Sent by the sender, delivered to the receiver as sent.
        case senderToReceiver = "S>R"
        /// Sent by the sender, not delivered as sent (dropped, or replaced by a `>R` line).
        case sentBySender = "S>"
        /// Delivered to the receiver, not as any sender datagram (what an attacker put in place).
        case toReceiver = ">R"
        case receiverToSender = "R>S"
        case sentByReceiver = "R>"
        case toSender = ">S"

        /// The endpoint that sent it, if one did.
        public var origin: Side? {
            switch self {
            case .senderToReceiver, .sentBySender: .sender
            case .receiverToSender, .sentByReceiver: .receiver
            case .toReceiver, .toSender: nil
            }
        }

        /// The endpoint that received it, if one did.
        public var destination: Side? {
            switch self {
            case .senderToReceiver, .toReceiver: .receiver
            case .receiverToSender, .toSender: .sender
            case .sentBySender, .sentByReceiver: nil
            }
        }

        /// The part of a round it belongs to: what the sender emitted and the receiver took, or the reverse.
        var half: Side {
            switch self {
            case .senderToReceiver, .sentBySender, .toReceiver: .sender
            case .receiverToSender, .sentByReceiver, .toSender: .receiver
            }
        }
    }
}
