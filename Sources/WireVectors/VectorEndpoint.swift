import Pipeline
import Session
import Sodium

/// The calls the vector discipline makes on an endpoint, the same for both sides, so that the
/// recorder and the replay drive a `SenderSession` and a `ReceiverSession` alike.
protocol VectorEndpoint {
    static var side: WireVector.Side { get }
    /// A link comes up (`connect` for the sender, `accept` for the receiver) with this connection's inputs.
    mutating func open(_ connection: WireVector.Connection, now: Instant) throws(SessionError)
    mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError)
    /// Everything it has to send now, in order, and the error that stopped it if one did.
    mutating func drain(now: Instant) -> (datagrams: [[UInt8]], error: SessionError?)
    mutating func handleTimers(now: Instant) throws(SessionError)
    var nextDeadline: Instant? { get }
    /// The link dropped.
    mutating func close(now: Instant)
}

/// More datagrams than this from one drain means the endpoint runs away (a window is at most 4096 frames).
let drainLimit = 10_000

extension SenderSession: VectorEndpoint {
    static var side: WireVector.Side { .sender }

    mutating func open(_ connection: WireVector.Connection, now: Instant) throws(SessionError) {
        try connect(maxDatagramSize: connection.senderDatagramSize, peerMaxDatagramSize: connection.receiverDatagramSize,
                    now: now, wallClock: connection.wallClock, ephemeral: SecureBytes(copying: connection.senderEphemeral))
    }

    mutating func drain(now: Instant) -> (datagrams: [[UInt8]], error: SessionError?) {
        var datagrams: [[UInt8]] = []
        do {
            while datagrams.count < drainLimit, let datagram = try nextDatagram(now: now) { datagrams.append(datagram) }
        } catch {
            return (datagrams, error)
        }
        return (datagrams, nil)
    }

    mutating func close(now: Instant) { linkLost() }
}

extension ReceiverSession: VectorEndpoint {
    static var side: WireVector.Side { .receiver }

    mutating func open(_ connection: WireVector.Connection, now: Instant) throws(SessionError) {
        try accept(maxDatagramSize: connection.receiverDatagramSize, peerMaxDatagramSize: connection.senderDatagramSize,
                   now: now, wallClock: connection.wallClock, ephemeral: SecureBytes(copying: connection.receiverEphemeral))
    }

    mutating func drain(now: Instant) -> (datagrams: [[UInt8]], error: SessionError?) {
        var datagrams: [[UInt8]] = []
        while datagrams.count < drainLimit, let datagram = nextDatagram(now: now) { datagrams.append(datagram) }
        return (datagrams, nil)
    }

    mutating func close(now: Instant) { linkLost(now: now) }
}
