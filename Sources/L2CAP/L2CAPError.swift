import Glibc

/// Why an L2CAP channel could not be opened or used. `errno` values are the kernel's.
public enum L2CAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// This kernel has no Bluetooth sockets (`socket` failed: EAFNOSUPPORT, EPROTONOSUPPORT).
    case unavailable(errno: Int32)
    /// Binding to the adapter's address or a PSM failed (EADDRINUSE, EACCES for a fixed PSM below 0x80…).
    case bindFailed(errno: Int32)
    /// `listen` or `accept` failed.
    case listenFailed(errno: Int32)
    /// `accept` ran out of descriptors or memory; the listener tries again (`L2CAPListener`).
    case outOfResources(errno: Int32)
    /// The peer refused or could not be reached (ECONNREFUSED: nobody listens on that PSM).
    case connectFailed(errno: Int32)
    /// The channel did not open in time.
    case timedOut
    /// A socket option the channel needs was refused.
    case optionFailed(name: String, errno: Int32)
    /// The listener or channel is closed.
    case closed
    /// bluetoothd did not tell the address a channel needs: the adapter's own (to bind) or the peer's.
    case addressUnknown(Whose)

    public enum Whose: Sendable, Equatable {
        case adapter, peer
    }

    public var description: String {
        switch self {
        case .unavailable(let e): "no Bluetooth sockets in this kernel (\(Self.text(e)))"
        case .bindFailed(let e): "binding failed (\(Self.text(e)))"
        case .listenFailed(let e): "listening failed (\(Self.text(e)))"
        case .outOfResources(let e): "accepting a channel failed (\(Self.text(e)))"
        case .connectFailed(let e): "connecting failed (\(Self.text(e)))"
        case .timedOut: "timed out"
        case .optionFailed(let name, let e): "the \(name) option was refused (\(Self.text(e)))"
        case .closed: "closed"
        case .addressUnknown(.adapter): "bluetoothd did not tell the adapter's address"
        case .addressUnknown(.peer): "bluetoothd did not tell the receiver's address"
        }
    }

    private static func text(_ code: Int32) -> String { "\(String(cString: strerror(code))), errno \(code)" }
}
