#if canImport(Glibc)
import Glibc
#endif
import Pipeline
import SocketIO
import Synchronization

/// A `DatagramTransport` over AF_UNIX SOCK_SEQPACKET socket pairs, the shape of what bluetoothd
/// hands over for GATT (one socket per direction) and of an L2CAP channel (one for both). It only
/// hands its sockets over: a driver must take them (`send`/`receive` throw). `close()` raises the
/// driver's wake signal if `wakes`.
public final class SocketPairTransport: DatagramTransport {
    private struct State {
        var sockets: DatagramSockets?
        var wake: (any CloseAlarm)?
    }
    private let state: Mutex<State>
    private let wakes: Bool
    public let maxDatagramSize: Int

    public init(_ sockets: DatagramSockets, maxDatagramSize: Int, wakes: Bool = true) {
        state = Mutex(State(sockets: sockets))
        self.maxDatagramSize = maxDatagramSize
        self.wakes = wakes
    }

    public func takeSockets(wakingOnClose signal: (any CloseAlarm)?) async -> DatagramSockets? {
        state.withLock { s in
            if wakes { s.wake = signal }
            return s.sockets
        }
    }

    public func send(_ datagram: [UInt8]) async throws { throw TransportError.closed }
    public func receive() async throws -> [UInt8] { throw TransportError.closed }

    /// Raises the wake signal as `close()` does but leaves the sockets open (`close()` still
    /// closes them): a driver that ends now learned of the close from the signal alone.
    public func raiseCloseSignalOnly() {
        state.withLock { $0.wake }?.raiseClosed()
    }

    public func close() async {
        let taken = state.withLock { s -> State in
            defer { s = State() }
            return s
        }
        taken.wake?.raiseClosed()
        if let sockets = taken.sockets {
            Glibc.close(sockets.inbound)
            if sockets.outbound != sockets.inbound { Glibc.close(sockets.outbound) }
        }
    }

    /// Two ends of one link. `separateDirections`: one socket pair per direction (GATT's acquired
    /// write and notify sockets); otherwise one pair carries both (an L2CAP channel).
    public static func pair(maxDatagramSize: Int = 510, separateDirections: Bool = true,
                            sendBuffer: Int32? = nil, wakes: Bool = true) throws(SocketPairError) -> (SocketPairTransport, SocketPairTransport) {
        let one = try socketPair(sendBuffer: sendBuffer)
        guard separateDirections else {
            return (SocketPairTransport(DatagramSockets(inbound: one.0, outbound: one.0), maxDatagramSize: maxDatagramSize, wakes: wakes),
                    SocketPairTransport(DatagramSockets(inbound: one.1, outbound: one.1), maxDatagramSize: maxDatagramSize, wakes: wakes))
        }
        let other = try socketPair(sendBuffer: sendBuffer)
        // a's writes go out on one.0 and arrive at b on one.1; b's on other.1, arriving at a on other.0.
        return (SocketPairTransport(DatagramSockets(inbound: other.0, outbound: one.0), maxDatagramSize: maxDatagramSize, wakes: wakes),
                SocketPairTransport(DatagramSockets(inbound: one.1, outbound: other.1), maxDatagramSize: maxDatagramSize, wakes: wakes))
    }
}

/// `socketpair` failed (its errno).
public struct SocketPairError: Error, Equatable {
    public let errno: Int32
}

/// An AF_UNIX SOCK_SEQPACKET pair (close-on-exec), with `SO_SNDBUF` set on both ends if given.
public func socketPair(sendBuffer: Int32? = nil) throws(SocketPairError) -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw SocketPairError(errno: errno)
    }
    if var size = sendBuffer {
        for fd in fds { _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
    }
    return (fds[0], fds[1])
}
