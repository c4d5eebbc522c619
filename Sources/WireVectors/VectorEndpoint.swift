import Pipeline
import Session
import Sodium
import Transfer

/// The calls the vector discipline makes on an endpoint, the same for both sides, so that the
/// recorder and the replay drive a `SenderSession` and a `ReceiverSession` alike.
protocol VectorEndpoint: DatagramEndpoint where Failure == SessionError {
    static var side: WireVector.Side { get }
    /// A link comes up (`connect` for the sender, `accept` for the receiver) with this connection's
    /// inputs; `extensions`: what the receiver's extensions characteristic lists.
    mutating func open(_ connection: WireVector.Connection, extensions: TransferExtensions, now: Instant) throws(SessionError)
    /// The link dropped.
    mutating func close(now: Instant)
}

extension SenderSession: VectorEndpoint {
    static var side: WireVector.Side { .sender }

    mutating func open(_ connection: WireVector.Connection, extensions: TransferExtensions, now: Instant) throws(SessionError) {
        try connect(maxDatagramSize: connection.senderDatagramSize, peerMaxDatagramSize: connection.receiverDatagramSize,
                    now: now, wallClock: connection.wallClock, receiverExtensions: extensions,
                    ephemeral: SecureBytes(copying: connection.senderEphemeral))
    }

    mutating func close(now: Instant) { linkLost() }
}

extension ReceiverSession: VectorEndpoint {
    static var side: WireVector.Side { .receiver }

    mutating func open(_ connection: WireVector.Connection, extensions: TransferExtensions, now: Instant) throws(SessionError) {
        try accept(maxDatagramSize: connection.receiverDatagramSize, peerMaxDatagramSize: connection.senderDatagramSize,
                   now: now, wallClock: connection.wallClock, ephemeral: SecureBytes(copying: connection.receiverEphemeral))
    }

    mutating func close(now: Instant) { linkLost(now: now) }
}
