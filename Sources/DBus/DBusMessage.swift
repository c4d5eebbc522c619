import CDBus

/// A received message (method call, return, error or signal), fully copied out of libdbus.
public struct DBusMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case methodCall, methodReturn, error, signal }

    public var kind: Kind
    public var serial: UInt32
    public var replySerial: UInt32
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var sender: String?
    public var destination: String?
    public var signature: String
    public var noReplyExpected: Bool
    public var arguments: [DBusValue]

    public init(
        kind: Kind, serial: UInt32 = 0, replySerial: UInt32 = 0, path: String? = nil, interface: String? = nil,
        member: String? = nil, errorName: String? = nil, sender: String? = nil, destination: String? = nil,
        noReplyExpected: Bool = false, arguments: [DBusValue] = []
    ) {
        self.kind = kind
        self.serial = serial
        self.replySerial = replySerial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.sender = sender
        self.destination = destination
        self.signature = arguments.map(\.signature).joined()
        self.noReplyExpected = noReplyExpected
        self.arguments = arguments
    }

    /// Copies header and body out of a libdbus message (does not take ownership).
    init(raw: OpaquePointer) throws(DBusError) {
        switch dbus_message_get_type(raw) {
        case DBusMessageTypeCode.methodCall: kind = .methodCall
        case DBusMessageTypeCode.methodReturn: kind = .methodReturn
        case DBusMessageTypeCode.error: kind = .error
        case DBusMessageTypeCode.signal: kind = .signal
        default: throw DBusError.malformedMessage(DBusProblem(.unknownMessageType))
        }
        func str(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        serial = dbus_message_get_serial(raw)
        replySerial = dbus_message_get_reply_serial(raw)
        path = str(dbus_message_get_path(raw))
        interface = str(dbus_message_get_interface(raw))
        member = str(dbus_message_get_member(raw))
        errorName = str(dbus_message_get_error_name(raw))
        sender = str(dbus_message_get_sender(raw))
        destination = str(dbus_message_get_destination(raw))
        signature = str(dbus_message_get_signature(raw)) ?? ""
        noReplyExpected = dbus_message_get_no_reply(raw) != 0
        arguments = try MessageReader.read(raw)
    }

    /// Typed access to argument `index`, throwing `invalidArgs` (useful in method handlers).
    public func argument(_ index: Int) throws(DBusErrorReply) -> DBusValue {
        guard index < arguments.count else {
            throw DBusErrorReply.invalidArgs("missing argument \(index) (signature \(signature))")
        }
        return arguments[index]
    }
}
