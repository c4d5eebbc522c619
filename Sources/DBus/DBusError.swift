/// Everything the DBus module throws. Tests and callers compare cases, not strings.
public enum DBusError: Error, Equatable, Sendable {
    /// A name, path, signature or member did not pass libdbus's validator; it never reached libdbus.
    case invalidName(kind: DBusNameKind, value: String)
    /// A value did not match the signature it was declared with (e.g. an array element of the wrong type).
    case invalidValue(String)
    /// Could not connect to or register on the bus.
    case connectionFailed(name: String, message: String)
    /// The connection is closed or the bus went away. Outstanding calls fail with this.
    case disconnected
    /// No reply arrived within the call's timeout.
    case timeout
    /// The peer answered with a D-Bus error (`org.freedesktop.DBus.Error.ServiceUnknown`, `org.bluez.Error.Failed`, ...).
    case remote(DBusRemoteError)
    /// A message from the bus did not have the shape we expected (wrong types, too deep, unknown type code).
    case malformedMessage(String)
    /// The connection cannot carry unix file descriptors (type `h`).
    case unixFDNotSupported
    /// libdbus could not allocate memory.
    case outOfMemory
    /// The calling task was cancelled while waiting for a reply.
    case cancelled
}

/// An error reply received from a peer: its D-Bus error name and human-readable message.
public struct DBusRemoteError: Error, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }
    public var description: String { "\(name): \(message)" }
}

/// An error an exported method handler throws to make the connection send a D-Bus error reply.
/// Any other error thrown by a handler is sent as `org.freedesktop.DBus.Error.Failed`.
public struct DBusErrorReply: Error, Equatable, Sendable {
    public var name: String
    public var message: String
    public init(name: String, message: String = "") {
        self.name = name
        self.message = message
    }

    public static func invalidArgs(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    public static func unknownMethod(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }
    public static func unknownProperty(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }
    public static func failed(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}

public enum DBusNameKind: String, Sendable {
    case busName, objectPath, interface, member, errorName, signature
}
