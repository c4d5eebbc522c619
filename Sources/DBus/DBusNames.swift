import CDBus

/// Validation of names before libdbus sees them (libdbus aborts the process on invalid ones).
public enum DBusNames {
    public static func isValidBusName(_ s: String) -> Bool { validate(s, dbus_validate_bus_name) }
    public static func isValidPath(_ s: String) -> Bool { validate(s, dbus_validate_path) }
    public static func isValidInterface(_ s: String) -> Bool { validate(s, dbus_validate_interface) }
    public static func isValidMember(_ s: String) -> Bool { validate(s, dbus_validate_member) }
    public static func isValidErrorName(_ s: String) -> Bool { validate(s, dbus_validate_error_name) }

    /// True for a complete signature (zero or more complete types).
    public static func isValidSignature(_ s: String) -> Bool {
        guard !s.utf8.contains(0) else { return false }
        return s.withCString { dbus_signature_validate($0, nil) != 0 }
    }

    /// True for exactly one complete type.
    public static func isValidSingleType(_ s: String) -> Bool {
        guard !s.utf8.contains(0) else { return false }
        return s.withCString { dbus_signature_validate_single($0, nil) != 0 }
    }

    private static func validate(
        _ s: String, _ f: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
    ) -> Bool {
        guard !s.utf8.contains(0) else { return false }
        return s.withCString { f($0, nil) != 0 }
    }

    static func check(_ s: String, _ kind: DBusNameKind) throws(DBusError) {
        let ok: Bool
        switch kind {
        case .busName: ok = isValidBusName(s)
        case .objectPath: ok = isValidPath(s)
        case .interface: ok = isValidInterface(s)
        case .member: ok = isValidMember(s)
        case .errorName: ok = isValidErrorName(s)
        case .signature: ok = isValidSignature(s)
        }
        if !ok { throw DBusError.invalidName(kind: kind, value: s) }
    }
}
