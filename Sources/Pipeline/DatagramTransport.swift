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

    /// The next datagram from the peer. Throws `TransportError.closed` once the link is gone.
    func receive() async throws -> [UInt8]

    /// Tears the link down. Pending and later calls throw `TransportError.closed`.
    func close() async

    /// Waits for at least one datagram and returns it with every other datagram already waiting,
    /// in order: one wake-up for a burst instead of one per datagram.
    func receiveAvailable() async throws -> [[UInt8]]
}

extension DatagramTransport {
    public func receiveAvailable() async throws -> [[UInt8]] { [try await receive()] }

    /// Both directions carry the same size unless a transport says otherwise.
    public var peerMaxDatagramSize: Int { maxDatagramSize }
}

public enum TransportError: Error, Equatable, Sendable {
    /// The link went away (disconnect, socket closed, peer gone).
    case closed
    /// A datagram larger than `maxDatagramSize` was handed to `send`.
    case datagramTooLarge(size: Int, limit: Int)
}

/// The most a BlueZ 5.66 GATT server accepts in one write-without-response value, whatever the MTU
/// (larger values are dropped silently; see docs/protocol.md).
public let blueZMaxValueLength = 510

/// Usable datagram size for an ATT MTU in the sender-to-receiver direction (Write Command):
/// `min(mtu - 3, 510)`.
public func attPayloadSize(mtu: Int) -> Int {
    max(0, min(mtu - 3, blueZMaxValueLength))
}

/// Usable datagram size for notifications (receiver to sender): `min(mtu - 5, 510)`. Between two
/// BlueZ 5.66 daemons a notification value of MTU-4 or MTU-3 bytes is lost silently: BlueZ sends
/// notifications as Multiple Handle Value Notifications, whose 4-byte length and handle prefix
/// leaves `mtu - 5` bytes (measured in the lab at MTU 48: 43 bytes arrive, 44 and 45 do not).
public func attNotificationSize(mtu: Int) -> Int {
    max(0, min(mtu - 5, blueZMaxValueLength))
}
