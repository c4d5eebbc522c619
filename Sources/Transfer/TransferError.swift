import Pipeline
/// Why the transfer layer stopped a session. Every case but `sourceFailed` is something the peer
/// did after it authenticated: trying again would only make it do it again.
public enum TransferError: Error, Equatable, Sendable {
    /// A message that is not allowed at this point of the transfer (docs/protocol.md §5).
    case unexpected(TransferMessage.Kind)
    /// The peer's message authenticated but is not a well-formed transfer message.
    case malformedMessage(TransferMessageError)
    /// A final record that does not carry `bye`, or `bye` in a record that is not final.
    case finalityMismatch
    /// The sender sent more bytes than it offered.
    case moreBytesThanOffered
    /// A `zdata` chunk that does not decompress to what it declares (the decompressor's code).
    case decompressionFailed(ChunkDecompressionError)
    /// The receiver acknowledged bytes that were never sent.
    case ackBeyondSent
    /// The receiver asked to resume at an offset the sender never reached, or one a stream has forgotten.
    case cannotResume(offset: UInt64)
    /// The local file could not be read, or changed size while it was being sent.
    case sourceFailed(FileSourceError)
    /// The receiver's user did not accept this sender at first contact, or did not answer in
    /// time (`reject` reason `notApproved`, §8.5).
    case notApproved
    /// The receiver is serving as many senders as it takes (`busy` in message 2, §8.6): come back
    /// after about `retryAfterSeconds`; `ahead` senders were told so before this one.
    case receiverBusy(retryAfterSeconds: UInt16, ahead: UInt8)
    /// The receiver proved its key and does not trust this sender (`notTrusted` in message 2, §8.7).
    case notTrusted
    /// The sender ran further ahead of a receiver busy storing a file than the transfer window
    /// and its files in flight allow (`TransferReceiver.maxBacklogCost`).
    case tooFarAhead
}

extension TransferError: CustomStringConvertible {
    /// What the peer did, in words for a log or an error message ("the sender broke the protocol: …").
    public var description: String {
        switch self {
        case .unexpected(let kind): "it sent \(kind == .accept || kind == .ack || kind == .offer ? "an" : "a") \(kind) message out of place"
        case .malformedMessage(let error): "it sent \(error)"
        case .finalityMismatch: "it sent a final record that is not a goodbye, or a goodbye that is not final"
        case .moreBytesThanOffered: "it sent more bytes than it offered"
        case .decompressionFailed(let error): "it sent a compressed chunk that does not decompress as declared (\(error.code.rawValue))"
        case .ackBeyondSent: "it acknowledged bytes that were never sent"
        case .cannotResume(let offset): "it asked to resume at byte \(offset), which was never sent or is no longer available"
        case .sourceFailed(let error): error.description
        case .notApproved: "its user did not accept this sender"
        case .receiverBusy(let seconds, _): "it is busy with other senders (come back in \(seconds) s)"
        case .notTrusted: "it does not trust this sender's key"
        case .tooFarAhead: "it sent far more than the transfer window while a file was being stored"
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
    /// This receiver could not store the file (disk full, permissions, …): what its storage said.
    case couldNotStore(StorageError)
    /// The receiver said it could not store the file (sender side: `confirm` status
    /// `couldNotStore`; why stays with the receiver).
    case receiverCouldNotStore
    /// The receiver refused the offer.
    case rejected(TransferMessage.RejectReason)
    /// A folder, and the receiver does not take folders (it did not grant `folders`).
    case foldersNotSupported
}
