import DBus

/// Why one `Device1.Connect` to a receiver just seen advertising failed in a way that a new scan
/// and another attempt can mend. `GattCentral.connect` retries these within the scan's time.
public enum ConnectAttemptFailure: Sendable, Equatable {
    /// bluetoothd waited `GattCentral.connectPatience` for a connectable advertisement from the
    /// device and none came (seen on BlueZ 5.82 / Linux 6.12 about once in a few hundred
    /// back-to-back sends in the lab, cause not known).
    case noConnectableAdvertisement
    /// bluetoothd removed the device's object between the scan and `Connect`: a temporary device
    /// whose earlier link had just ended. The next advertisement makes it again.
    case deviceVanished
    /// The controller gave up on the connection before it was up (bluetoothd's
    /// `le-connection-abort-by-local`): in the lab, two centrals answered the same advertisement
    /// and the receiver took the other one (the controller reports "Connection Failed to be
    /// Established"). The receiver advertises again for its next free slot.
    case notEstablished(DBusRemoteError)

    init?(_ error: BlueZError) {
        switch error {
        case .dbus(.timeout):
            self = .noConnectableAdvertisement
        case .bluez(let reply) where reply.name == .bluezFailed && Self.notEstablishedReasons.contains(reply.message):
            self = .notEstablished(reply)
        case .dbus(.remote(let reply)) where Self.vanishedDeviceErrors.contains(reply.name):
            self = .deviceVanished
        case .bluez(let reply) where Self.vanishedDeviceErrors.contains(reply.name):
            self = .deviceVanished
        default:
            return nil
        }
    }

    /// What the sender reports when the last attempt failed this way.
    public var error: BlueZError {
        switch self {
        case .noConnectableAdvertisement: .timeout(.connect)
        case .deviceVanished: .linkLost
        case .notEstablished(let reply): .bluez(reply)
        }
    }

    /// bluetoothd's reasons (src/error.h, `ERR_LE_CONN_*`) for a link that never came up and that
    /// a later attempt can bring up.
    private static let notEstablishedReasons: Set<String> = ["le-connection-abort-by-local", "le-connection-abort-by-remote"]
    /// bluetoothd's answers on a device object that is gone (also `GattPeripheral.linkGone`).
    static let vanishedDeviceErrors: Set<DBusErrorName> = [.unknownObject, .unknownMethod, .bluezDoesNotExist]
}

extension ConnectAttemptFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noConnectableAdvertisement: "no connectable advertisement within \(GattCentral.connectPatience.components.seconds) s"
        case .deviceVanished: "bluetoothd dropped the device object"
        case .notEstablished(let reply): "the link was not established: \(reply.message)"
        }
    }
}
