import Pipeline

/// The sockets one link's datagrams pass through: one datagram per `recv`/`send` (SOCK_SEQPACKET).
/// Both may be the same descriptor (an L2CAP channel) or two (BlueZ's acquired GATT sockets: the
/// peer's writes in, our notifications or writes out).
public struct DatagramSockets: Sendable, Equatable {
    public let inbound: Int32
    public let outbound: Int32

    public init(inbound: Int32, outbound: Int32) {
        self.inbound = inbound
        self.outbound = outbound
    }
}

/// A `DatagramTransport` whose datagrams can pass through kernel sockets, so that a driver may read
/// and write them itself (in batches, without a thread hop per datagram) instead of calling
/// `send`/`receive`.
public protocol SocketBackedTransport: DatagramTransport {
    /// Waits until both directions have a socket, then hands them over: from then on the transport
    /// neither reads nor writes them, and the caller must not close them (`close()` does). With a
    /// `signal`, `close()` raises it (`.closed`) before it closes the sockets (at once if the link
    /// closed already), so that a driver blocked in `poll()` on them stops at once. Returns nil when
    /// some direction goes another way (D-Bus calls) or the link closed first: drive it through
    /// `send`/`receive` then.
    func takeSockets(wakingOnClose signal: WakeSignal?) async -> DatagramSockets?
}
