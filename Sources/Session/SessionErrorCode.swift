import Framing
import Handshake
import Pairing
import Record
import Transfer

extension SessionError {
    /// A stable, machine-readable name for the error: what wire vectors (`expect:`), JSON events
    /// and scripts match on, never the prose. The case name, then the nested cause's case after a
    /// dot (`record.authenticationFailed`, `transfer.unexpected`, `refusedSender.unknownSender`);
    /// payloads such as names and offsets are not part of it.
    public var code: String {
        switch self {
        case .refusedByPeer: "refusedByPeer"
        case .notApprovedByPeer: "notApprovedByPeer"
        case .notTrustedByPeer: "notTrustedByPeer"
        case .approvalTimeout: "approvalTimeout"
        case .peerNotAuthenticated: "peerNotAuthenticated"
        case .receiverBusy: "receiverBusy"
        case .refusedSender(let reason): "refusedSender." + reason.code
        case .handshakeTimeout: "handshakeTimeout"
        case .record(let cause): "record." + cause.code
        case .linkLost: "linkLost"
        case .framing(let cause): "framing." + cause.code
        case .handshake(let cause): "handshake." + cause.code
        case .transfer(let cause): "transfer." + cause.code
        case .pairing(let cause): "pairing." + cause.code
        }
    }
}

extension SessionError.RefusalReason {
    public var code: String {
        switch self {
        case .malformedHandshake: "malformedHandshake"
        case .unknownSender: "unknownSender"
        case .replayedHandshake: "replayedHandshake"
        case .clockAhead: "clockAhead"
        case .badOpening: "badOpening"
        case .notApproved: "notApproved"
        case .approvalTimedOut: "approvalTimedOut"
        case .toldBusy: "toldBusy"
        case .replayGuardNotSaved: "replayGuardNotSaved"
        }
    }
}

extension RecordError {
    public var code: String {
        switch self {
        case .authenticationFailed: "authenticationFailed"
        case .truncated: "truncated"
        case .reservedBitsSet: "reservedBitsSet"
        case .recordAfterFinal: "recordAfterFinal"
        case .counterExhausted: "counterExhausted"
        case .tooLarge: "tooLarge"
        }
    }
}

extension LinkError {
    public var code: String {
        switch self {
        case .messageTooLarge: "messageTooLarge"
        case .emptyMessage: "emptyMessage"
        case .linkDead: "linkDead"
        case .protocolViolation: "protocolViolation"
        }
    }
}

extension HandshakeError {
    public var code: String {
        switch self {
        case .wrongState: "wrongState"
        case .messageTooShort: "messageTooShort"
        case .messageTooLong: "messageTooLong"
        case .decryptionFailed: "decryptionFailed"
        case .invalidPublicKey: "invalidPublicKey"
        case .invalidKeyLength: "invalidKeyLength"
        case .refused: "refused"
        case .nonceExhausted: "nonceExhausted"
        }
    }
}

extension TransferError {
    public var code: String {
        switch self {
        case .unexpected: "unexpected"
        case .malformedMessage: "malformedMessage"
        case .finalityMismatch: "finalityMismatch"
        case .moreBytesThanOffered: "moreBytesThanOffered"
        case .decompressionFailed: "decompressionFailed"
        case .ackBeyondSent: "ackBeyondSent"
        case .cannotResume: "cannotResume"
        case .sourceFailed: "sourceFailed"
        case .notApproved: "notApproved"
        case .receiverBusy: "receiverBusy"
        case .notTrusted: "notTrusted"
        case .tooFarAhead: "tooFarAhead"
        }
    }
}
