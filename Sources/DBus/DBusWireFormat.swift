import CDBus

/// Messages to and from the D-Bus wire format, through libdbus's own marshaller and demarshaller
/// (which validates header, signature and body). For the fuzz targets and tests: the connection
/// never needs this, libdbus reads and writes the socket itself.
extension DBusMessage {
    /// Parses one message in the D-Bus wire format, then reads its body as for a message from the bus.
    package init(marshalled bytes: [UInt8]) throws(DBusError) {
        // libdbus aborts on a NULL buffer, and counts in Int32.
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { throw .malformedMessage(DBusProblem(.notAMessage, "no message")) }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), &error) }
        }
        guard let raw else {
            let reason = dbus_error_is_set(&error) != 0 ? error.message.map { String(cString: $0) } : nil
            throw .malformedMessage(DBusProblem(.notAMessage, reason ?? "not a D-Bus message"))
        }
        defer { dbus_message_unref(raw) }
        try self.init(raw: raw)
    }

    /// The message in the D-Bus wire format (little-endian, as libdbus writes it). Names and values
    /// are validated first, since libdbus aborts on invalid ones; unix fds cannot travel this way.
    package func marshalled() throws(DBusError) -> [UInt8] {
        let type: Int32 = switch kind {
        case .methodCall: DBusMessageTypeCode.methodCall
        case .methodReturn: DBusMessageTypeCode.methodReturn
        case .error: DBusMessageTypeCode.error
        case .signal: DBusMessageTypeCode.signal
        }
        guard serial != 0 else { throw .invalidValue(DBusProblem(.zeroSerial, "serial 0")) }
        guard !arguments.contains(where: \.containsUnixFD) else { throw .unixFDNotSupported }
        let fields: [(String?, DBusNameKind)] = [
            (path, .objectPath), (interface, .interface), (member, .member), (errorName, .errorName),
            (destination, .busName), (sender, .busName),
        ]
        for case let (value?, kind) in fields { try DBusNames.check(value, kind) }

        guard let raw = dbus_message_new(type) else { throw .outOfMemory }
        defer { dbus_message_unref(raw) }
        var ok = true
        if let path { ok = ok && dbus_message_set_path(raw, path) != 0 }
        if let interface { ok = ok && dbus_message_set_interface(raw, interface) != 0 }
        if let member { ok = ok && dbus_message_set_member(raw, member) != 0 }
        if let errorName { ok = ok && dbus_message_set_error_name(raw, errorName) != 0 }
        if let destination { ok = ok && dbus_message_set_destination(raw, destination) != 0 }
        if let sender { ok = ok && dbus_message_set_sender(raw, sender) != 0 }
        if replySerial != 0 { ok = ok && dbus_message_set_reply_serial(raw, replySerial) != 0 }
        guard ok else { throw .outOfMemory }
        dbus_message_set_no_reply(raw, noReplyExpected ? 1 : 0)
        dbus_message_set_serial(raw, serial)
        try MessageWriter.append(arguments, to: raw)

        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else { throw .outOfMemory }
        defer { dbus_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }
}
