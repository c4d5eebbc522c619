import Glibc

/// Which bus to connect to.
public enum DBusBus: Sendable, Equatable {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, or `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/tmp/x/bus`.
    case address(String)

    /// The address a connection to this bus would use.
    public func resolve() throws(DBusError) -> String {
        switch self {
        case .system:
            if let a = getenv("DBUS_SYSTEM_BUS_ADDRESS") { return String(cString: a) }
            return "unix:path=/run/dbus/system_bus_socket"
        case .session:
            guard let a = getenv("DBUS_SESSION_BUS_ADDRESS") else {
                throw DBusError.connectionFailed(DBusRemoteError(name: .noServer, message: "DBUS_SESSION_BUS_ADDRESS is not set"))
            }
            return String(cString: a)
        case .address(let a):
            return a
        }
    }
}

/// Handles method calls to an exported object path. Return the reply's arguments, or throw
/// `DBusErrorReply` for a D-Bus error reply (any other error becomes `org.freedesktop.DBus.Error.Failed`).
public typealias DBusMethodHandler = @Sendable (DBusMessage) async throws -> [DBusValue]
