import CBluetooth
import Glibc
import Pipeline
import SocketIO
import Synchronization

/// One open L2CAP LE credit-based channel as a `DatagramTransport`: one datagram is one SDU, up to
/// the peer's receive MTU one way (`BT_SNDMTU`) and ours the other (`BT_RCVMTU`). The kernel's
/// credits mean nothing is dropped for lack of room: a full channel makes `send` wait.
///
/// Usually a driver takes the socket (`takeSockets`) and reads and writes it itself; `send` and
/// `receive` serve the rest.
public final class L2CAPChannel: DatagramTransport {
    private struct State {
        var fd: Int32
        var closed = false
        var handedOver = false
        /// Raised by `close()` so that a driver polling the handed-over socket stops at once.
        var wake: (any CloseAlarm)?
    }
    private let state: Mutex<State>
    private let waiter = FDWaiter()

    /// The peer's address (the channel's other end).
    public let peer: BluetoothAddress
    public let maxDatagramSize: Int
    public let peerMaxDatagramSize: Int
    public let transportDescription: TransportDescription

    /// Takes ownership of `fd`, a connected LE L2CAP socket: the sizes are the kernel's (the peer's
    /// receive MTU, ours), the PHY what `BT_PHY` says.
    convenience init(fd: Int32, peer: BluetoothAddress, receiveMTU: Int) {
        self.init(fd: fd, peer: peer,
                  sendSize: L2CAPSocket.mtuOption(fd, Int32(BLESEND_BT_SNDMTU)) ?? 23,
                  receiveSize: L2CAPSocket.mtuOption(fd, Int32(BLESEND_BT_RCVMTU)) ?? receiveMTU,
                  phy: L2CAPSocket.phy(fd))
    }

    /// Takes ownership of `fd`, any connected `SOCK_SEQPACKET` socket, with the sizes given (tests).
    init(fd: Int32, peer: BluetoothAddress, sendSize: Int, receiveSize: Int, phy: String?) {
        state = Mutex(State(fd: fd))
        self.peer = peer
        maxDatagramSize = sendSize
        peerMaxDatagramSize = receiveSize
        transportDescription = TransportDescription(kind: .l2cap, sendSize: sendSize, receiveSize: receiveSize, phy: phy)
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    public func takeSockets(wakingOnClose signal: (any CloseAlarm)?) async -> DatagramSockets? {
        let sockets = state.withLock { s -> DatagramSockets? in
            guard !s.closed else { return nil }
            s.handedOver = true
            s.wake = signal
            return DatagramSockets(inbound: s.fd, outbound: s.fd)
        }
        if sockets == nil { signal?.raiseClosed() }
        return sockets
    }

    private func descriptor() throws -> Int32 {
        let fd = state.withLock { $0.closed ? -1 : $0.fd }
        guard fd >= 0 else { throw TransportError.closed }
        return fd
    }

    public func send(_ datagram: [UInt8]) async throws {
        guard datagram.count <= maxDatagramSize else {
            throw TransportError.datagramTooLarge(size: datagram.count, limit: maxDatagramSize)
        }
        while true {
            let fd = try descriptor()
            let n = datagram.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if n == datagram.count { return }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS {
                await waiter.wait(fd: fd, forWriting: true)
                continue
            }
            await close()
            throw TransportError.closed
        }
    }

    public func receive() async throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(peerMaxDatagramSize, 1))
        while true {
            let fd = try descriptor()
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { return Array(buffer[0..<n]) }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                await waiter.wait(fd: fd, forWriting: false)
                continue
            }
            // 0 bytes: an empty SDU (the layers above count and drop it) unless the channel is gone.
            if n == 0, !socketPeerClosed(fd) { return [] }
            await close()
            throw TransportError.closed
        }
    }

    public func close() async {
        let (fd, wake) = state.withLock { s -> (Int32, (any CloseAlarm)?) in
            guard !s.closed else { return (-1, nil) }
            s.closed = true
            return (s.fd, s.wake)
        }
        guard fd >= 0 else { return }
        wake?.raiseClosed()
        waiter.cancelAll()
        Glibc.close(fd)
    }

    deinit {
        let fd = state.withLock { $0.closed ? -1 : $0.fd }
        if fd >= 0 { Glibc.close(fd) }
    }
}
