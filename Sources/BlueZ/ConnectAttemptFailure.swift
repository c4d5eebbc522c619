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
    /// The link did not come up, or went down while bluetoothd set it up (`notEstablishedReasons`):
    /// in the lab, two centrals answered the same advertisement and the receiver took the other
    /// one (the controller reports "Connection Failed to be Established"), and a stranger
    /// reconnecting as fast as it could kept the receiver's controller busy. The receiver
    /// advertises again for its next free slot.
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

    /// bluetoothd's answers to `Connect` (`Failed`, with these messages) for a link that never came
    /// up and that a later attempt can bring up (src/device.c, BlueZ 5.66 and 5.82):
    /// - the ATT socket's connection was aborted or reset (`ERR_LE_CONN_ABORT_BY_LOCAL`/`_REMOTE`);
    /// - the kernel would not start the connection (`device_connect_le` answers `strerror(EIO)`;
    ///   5.82's `att_connect_cb` calls an EIO `le-connection-create-socket`);
    /// - the link came up and went down before the ATT channel was ready (`device_remove_connection`
    ///   answers the waiting `Connect` with `ERR_BREDR_CONN_CANCELED`, on LE links too).
    private static let notEstablishedReasons: Set<String> = [
        "le-connection-abort-by-local", "le-connection-abort-by-remote", "Input/output error", "le-connection-create-socket",
        "br-connection-canceled",
    ]
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
