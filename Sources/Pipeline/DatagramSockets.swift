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

/// What a transport that handed its sockets over raises when its link closes, so that a driver
/// blocked in `poll()` on them stops at once (`SocketIO.WakeSignal` is one).
public protocol CloseAlarm: AnyObject, Sendable {
    func raiseClosed()
}
