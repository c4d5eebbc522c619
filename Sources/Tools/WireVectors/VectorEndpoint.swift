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

/// The receiver of a vector: a `ReceiverSession` whose user, when a first contact asks
/// (`firstContact` in the vector's extensions, docs/protocol.md §8.5), answers yes at once: right
/// after the datagram that completed message 1, under `VectorParties.trustedName`. The answer's
/// record then follows message 2 in the same round, and a replay does the same.
struct VectorReceiver: VectorEndpoint {
    var session: ReceiverSession

    static var side: WireVector.Side { .receiver }

    var connectionComplete: Bool { session.connectionComplete }

    mutating func open(_ connection: WireVector.Connection, extensions: TransferExtensions, now: Instant) throws(SessionError) {
        try session.accept(maxDatagramSize: connection.receiverDatagramSize, peerMaxDatagramSize: connection.senderDatagramSize,
                           now: now, wallClock: connection.wallClock, ephemeral: SecureBytes(copying: connection.receiverEphemeral),
                           busy: connection.receiverBusy)
    }

    mutating func close(now: Instant) { session.linkLost(now: now) }

    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        try session.receive(datagram: datagram, now: now)
        if session.isAwaitingApproval { try session.approve(name: VectorParties.trustedName, now: now) }
    }

    mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? { session.nextDatagram(now: now) }

    mutating func handleTimers(now: Instant) throws(SessionError) { try session.handleTimers(now: now) }

    var nextDeadline: Instant? { session.nextDeadline }
}
