import DBus
import L2CAP

/// Errors from the BlueZ transport, distinguishing the situations a user must act on differently.
public enum BlueZError: Error, Equatable, Sendable {
    /// The bus is there but `org.bluez` is not on it (bluetoothd not running).
    case bluetoothdNotRunning
    /// The D-Bus system bus itself could not be reached; carries why (`connectionFailed`, with
    /// libdbus's error name and message).
    case busUnavailable(DBusError)
    /// The bus refused to pass our call to bluetoothd (its policy: not root, not in the
    /// `bluetooth` group where the policy asks for that); carries the bus's reply.
    case accessDenied(DBusRemoteError)
    /// No such adapter (named), or no adapter at all (nil).
    case noAdapter(String?)
    /// The adapter (its object path; nil when bluetoothd answered `NotReady` without naming it)
    /// exists but is powered off (or blocked).
    case adapterPoweredOff(String?)
    /// No peer advertising the transfer service was found before the timeout.
    case notFound
    /// Receivers are near, and their private-discovery data lists another sender, not this one.
    case notListed
    /// The peer did not get ready in time.
    case timeout(Wait)
    /// The link went away.
    case linkLost
    /// The peer's GATT database has no transfer characteristic.
    case characteristicMissing
    /// Another D-Bus client on this machine holds the transfer characteristic's acquired write or
    /// notify socket on the same peer, so bluetoothd refuses ours; carries bluetoothd's refusal
    /// (`org.bluez.Error.NotPermitted`, "Write acquired" or "Notify acquired").
    case characteristicBusy(DBusRemoteError)
    /// `--transport l2cap`, and the peer publishes no L2CAP PSM (an older receiver, or one whose
    /// kernel or adapter has no LE L2CAP channels).
    case l2capNotOffered
    /// `--transport l2cap`, and the channel the peer offers did not open.
    case l2cap(L2CAPError)
    /// BlueZ answered with an error (`org.bluez.Error.*`).
    case bluez(DBusRemoteError)
    /// Any other D-Bus failure.
    case dbus(DBusError)

    /// What a refused `AcquireWrite`, `AcquireNotify` or `StartNotify` on a peer's characteristic
    /// means. bluetoothd 5.66 (src/gatt-client.c) answers `org.bluez.Error.NotPermitted` ("Write
    /// acquired", "Notify acquired") when another client holds that socket.
    static func acquireRefused(_ error: BlueZError) -> BlueZError {
        if case .bluez(let remote) = error, remote.name == .bluezNotPermitted {
            return .characteristicBusy(remote)
        }
        return error
    }

    static func from(_ e: DBusError) -> BlueZError {
        switch e {
        // ServiceUnknown/NameHasNoOwner: nobody owns org.bluez. Spawn.*: the bus tried to start
        // bluetoothd for the call (D-Bus activation) and it failed or exited (seen after bluetoothd
        // crashed: `Spawn.ChildExited`).
        case .remote(let r) where r.name == .serviceUnknown || r.name == .nameHasNoOwner
            || r.name.isIn("org.freedesktop.DBus.Error.Spawn."):
            return .bluetoothdNotRunning
        case .remote(let r) where r.name == .accessDenied:
            return .accessDenied(r)
        case .remote(let r) where r.name == .bluezNotReady:
            return .adapterPoweredOff(nil)
        // bluetoothd's answer to a call on a peer whose link has just ended (src/gatt-client.c:
        // `Failed` "Not connected"; src/error.c: `NotConnected`): the link went away.
        case .remote(let r) where r.name == .bluezNotConnected || (r.name == .bluezFailed && r.message == "Not connected"):
            return .linkLost
        case .remote(let r) where r.name.isIn("org.bluez."):
            return .bluez(r)
        case .connectionFailed:
            return .busUnavailable(e)
        case .disconnected:
            return .linkLost
        default:
            return .dbus(e)
        }
    }
}

extension BlueZError {
    /// What the sender was waiting for when the peer did not answer in time.
    public enum Wait: String, Sendable, Equatable, CustomStringConvertible {
        /// `Device1.Connect`: no connectable advertisement came.
        case connect
        /// bluetoothd did not resolve the peer's services.
        case servicesResolved = "ServicesResolved"

        public var description: String { rawValue }
    }
}

extension DBusErrorName {
    public static let bluezNotPermitted: DBusErrorName = "org.bluez.Error.NotPermitted"
    public static let bluezNotReady: DBusErrorName = "org.bluez.Error.NotReady"
    public static let bluezDoesNotExist: DBusErrorName = "org.bluez.Error.DoesNotExist"
    public static let bluezFailed: DBusErrorName = "org.bluez.Error.Failed"
    public static let bluezNotConnected: DBusErrorName = "org.bluez.Error.NotConnected"
}
