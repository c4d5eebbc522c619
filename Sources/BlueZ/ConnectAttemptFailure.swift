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

    init?(_ error: BlueZError) {
        switch error {
        case .dbus(.timeout):
            self = .noConnectableAdvertisement
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
        }
    }

    private static let vanishedDeviceErrors: Set<DBusErrorName> = [.unknownObject, .unknownMethod, .bluezDoesNotExist]
}

extension ConnectAttemptFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .noConnectableAdvertisement: "no connectable advertisement within \(GattCentral.connectPatience.components.seconds) s"
        case .deviceVanished: "bluetoothd dropped the device object"
        }
    }
}
