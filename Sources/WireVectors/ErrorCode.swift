import Session
import Transfer

extension SessionError {
    /// The stable name a vector's `expect:` line uses for this error: the Swift case name, with
    /// the case of a nested error after a dot, and `framing` for a framing-layer violation. The
    /// free-text details are not part of it.
    public var vectorCode: String {
        switch self {
        case .refusedByPeer: "refusedByPeer"
        case .peerNotAuthenticated: "peerNotAuthenticated"
        case .refusedSender(let reason): "refusedSender.\(reason.vectorCode)"
        case .handshakeTimeout: "handshakeTimeout"
        case .integrity: "integrity"
        case .linkLost: "linkLost"
        case .protocolViolation(let detail): detail.hasPrefix("framing:") ? "framing" : "protocolViolation"
        case .transfer(let error): "transfer.\(error.vectorCode)"
        }
    }
}

extension SessionError.RefusalReason {
    var vectorCode: String {
        switch self {
        case .malformedHandshake: "malformedHandshake"
        case .unknownSender: "unknownSender"
        case .replayedHandshake: "replayedHandshake"
        case .clockAhead: "clockAhead"
        case .badOpening: "badOpening"
        }
    }
}

extension TransferError {
    var vectorCode: String {
        switch self {
        case .protocolViolation: "protocolViolation"
        case .malformedMessage: "malformedMessage"
        case .moreBytesThanOffered: "moreBytesThanOffered"
        case .cannotResume: "cannotResume"
        case .sourceFailed: "sourceFailed"
        }
    }
}
