/// A link that carries whole datagrams, each at most `maxDatagramSize` bytes, in both directions.
///
/// This is what BlueZ's acquired GATT sockets are (one send is one ATT value), and what the
/// in-memory transport simulates. A transport may drop, and in simulation duplicate, reorder or
/// corrupt, datagrams; the framing layer above copes with all of that.
public protocol DatagramTransport: AnyObject, Sendable {
    /// The largest datagram the link carries right now: `min(ATT MTU - 3, 510)` on BlueZ.
    var maxDatagramSize: Int { get }

    /// The largest datagram the peer sends us, when it differs from ours (GATT: notifications are
    /// 2 bytes shorter than writes). The framing layer sizes its window by the smaller of the two.
    var peerMaxDatagramSize: Int { get }

    /// Sends one datagram. Suspends while the link's send queue is full (back-pressure, not loss).
    /// Throws `TransportError.closed` once the link is gone.
    func send(_ datagram: [UInt8]) async throws

    /// Sends `datagrams` in order, as that many `send` calls would, with one call for the batch
    /// (the default makes the calls; a D-Bus call per datagram cannot do better). When it throws,
    /// the datagrams before the one that failed were sent.
    func send(contentsOf datagrams: [[UInt8]]) async throws

    /// The next datagram from the peer. Throws `TransportError.closed` once the link is gone.
    func receive() async throws -> [UInt8]

    /// Tears the link down. Pending and later calls throw `TransportError.closed`.
    func close() async

    /// Waits for at least one datagram and returns it with every other datagram already waiting,
    /// in order: one wake-up for a burst instead of one per datagram.
    func receiveAvailable() async throws -> [[UInt8]]

    /// What carries the datagrams, for people (the log, the progress line, `--json`).
    var transportDescription: TransportDescription { get }

    /// Hands the link's kernel sockets to a driver that reads and writes them itself, in batches
    /// (recvmmsg/sendmmsg), without a thread hop per datagram. Waits until both directions have a
    /// socket; from then on the transport neither reads nor writes them, and the caller must not
    /// close them (`close()` does). With an `alarm`, `close()` raises it before it closes the
    /// sockets (at once if the link closed already). Nil, the default, when the datagrams do not
    /// pass through sockets a driver may take (memory, D-Bus calls) or the link closed first: the
    /// driver uses `send`/`receiveAvailable` then.
    func takeSockets(wakingOnClose alarm: (any CloseAlarm)?) async -> DatagramSockets?
}

extension DatagramTransport {
    public func receiveAvailable() async throws -> [[UInt8]] { [try await receive()] }

    public func send(contentsOf datagrams: [[UInt8]]) async throws {
        for datagram in datagrams { try await send(datagram) }
    }

    /// Both directions carry the same size unless a transport says otherwise.
    public var peerMaxDatagramSize: Int { maxDatagramSize }

    public var transportDescription: TransportDescription {
        TransportDescription(kind: .memory, sendSize: maxDatagramSize, receiveSize: peerMaxDatagramSize)
    }

    /// No sockets to hand over: driven through `send` and `receiveAvailable`.
    public func takeSockets(wakingOnClose alarm: (any CloseAlarm)?) async -> DatagramSockets? { nil }
}

public enum TransportError: Error, Equatable, Sendable {
    /// The link went away (disconnect, socket closed, peer gone).
    case closed
    /// A datagram larger than `maxDatagramSize` was handed to `send`.
    case datagramTooLarge(size: Int, limit: Int)
}
