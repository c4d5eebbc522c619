/// Everything the DBus module throws. Tests and callers compare cases and codes, not strings: a
/// case's payload is typed (a D-Bus error name, a `DBusProblem` code), and text is only the reason.
public enum DBusError: Error, Equatable, Sendable {
    /// A name, path, signature or member did not pass libdbus's validator; it never reached libdbus.
    case invalidName(kind: DBusNameKind, value: String)
    /// A value did not match the signature it was declared with (e.g. an array element of the wrong type).
    case invalidValue(DBusProblem)
    /// Could not connect to or register on the bus: libdbus's error name (`org.freedesktop.DBus.Error.NoServer`,
    /// `…FileNotFound`) and message.
    case connectionFailed(DBusRemoteError)
    /// The connection is closed or the bus went away. Outstanding calls fail with this.
    case disconnected
    /// No reply arrived within the call's timeout.
    case timeout
    /// The peer answered with a D-Bus error (`org.freedesktop.DBus.Error.ServiceUnknown`, `org.bluez.Error.Failed`, ...).
    case remote(DBusRemoteError)
    /// A message from the bus did not have the shape we expected (wrong types, too deep, unknown type code).
    case malformedMessage(DBusProblem)
    /// The connection cannot carry unix file descriptors (type `h`).
    case unixFDNotSupported
    /// libdbus could not allocate memory.
    case outOfMemory
    /// The calling task was cancelled while waiting for a reply.
    case cancelled
}

extension DBusError: CustomStringConvertible {
    /// For people: the bus's own words where there are some.
    public var description: String {
        switch self {
        case .invalidName(let kind, let value): "invalid \(kind.rawValue) \"\(value)\""
        case .invalidValue(let problem): "invalid value (\(problem))"
        case .connectionFailed(let cause): cause.message.isEmpty ? cause.name.description : cause.message
        case .disconnected: "the bus connection closed"
        case .timeout: "no reply in time"
        case .remote(let cause): cause.description
        case .malformedMessage(let problem): "malformed message (\(problem))"
        case .unixFDNotSupported: "the bus connection cannot pass file descriptors"
        case .outOfMemory: "out of memory"
        case .cancelled: "cancelled"
        }
    }
}

/// What was wrong with a value we were to send or a message we received: a code to match on and a
/// reason for people. Two are equal when their codes are (as swift-certificates' `CertificateError`).
public struct DBusProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Extensible: a new problem is one more `static let`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        // Values we would send.
        public static let nulInString = Code("nulInString")
        public static let nestingTooDeep = Code("nestingTooDeep")
        public static let elementTypeMismatch = Code("elementTypeMismatch")
        public static let emptyStructure = Code("emptyStructure")
        public static let quoteInMatchArgument = Code("quoteInMatchArgument")
        public static let zeroSerial = Code("zeroSerial")
        // Messages we received.
        public static let notAMessage = Code("notAMessage")
        public static let nullString = Code("nullString")
        public static let invalidUnixFD = Code("invalidUnixFD")
        public static let emptyVariant = Code("emptyVariant")
        public static let unexpectedTypeCode = Code("unexpectedTypeCode")
        public static let badSignature = Code("badSignature")
        public static let incompleteDictEntry = Code("incompleteDictEntry")
        public static let unknownMessageType = Code("unknownMessageType")
        /// A reply whose arguments are not what the method returns.
        public static let unexpectedReply = Code("unexpectedReply")
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    public static func == (a: DBusProblem, b: DBusProblem) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { reason.isEmpty ? code.name : reason }
}

/// A D-Bus error name (`org.bluez.Error.NotPermitted`): the code of an error reply.
public struct DBusErrorName: Hashable, Sendable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    /// Whether the name is in `namespace` (`org.bluez.`, `org.freedesktop.DBus.Error.Spawn.`).
    public func isIn(_ namespace: String) -> Bool { rawValue.hasPrefix(namespace) }

    public static let failed: DBusErrorName = "org.freedesktop.DBus.Error.Failed"
    public static let noServer: DBusErrorName = "org.freedesktop.DBus.Error.NoServer"
    public static let serviceUnknown: DBusErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner: DBusErrorName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let accessDenied: DBusErrorName = "org.freedesktop.DBus.Error.AccessDenied"
    public static let unknownObject: DBusErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownMethod: DBusErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
}

/// An error reply received from a peer: its D-Bus error name (the code) and its message (the
/// reason). Two are equal when their names are.
public struct DBusRemoteError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: DBusErrorName
    public var message: String
    public init(name: DBusErrorName, message: String) {
        self.name = name
        self.message = message
    }
    public static func == (a: DBusRemoteError, b: DBusRemoteError) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
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
    /// BlueZ's "operation in progress" (bluetoothd answers the peer with ATT's "already in progress").
    public static func inProgress(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.bluez.Error.InProgress", message: message)
    }
    public static func failed(_ message: String) -> DBusErrorReply {
        DBusErrorReply(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}

public enum DBusNameKind: String, Sendable {
    case busName, objectPath, interface, member, errorName, signature
}
