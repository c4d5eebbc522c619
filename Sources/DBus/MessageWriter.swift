import CDBus

/// Appends `DBusValue`s to a libdbus message with `DBusMessageIter`. Values are validated first,
/// so libdbus never sees an invalid path, signature or mismatched element (it would abort).
enum MessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for value in values { try value.validate() }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values { try append(value, to: &iter) }
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) throws(DBusError) {
        var v = value
        guard dbus_message_iter_append_basic(&iter, type, &v) != 0 else { throw DBusError.outOfMemory }
    }

    private static func string(_ iter: inout DBusMessageIter, _ type: Int32, _ s: String) throws(DBusError) {
        let ok = s.withCString { p -> Bool in
            var ptr: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(&iter, type, &ptr) != 0
        }
        guard ok else { throw DBusError.outOfMemory }
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) != 0 }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
        }
        guard opened else { throw DBusError.outOfMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw DBusError.outOfMemory }
    }

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try basic(&iter, DBusTypeCode.byte, v)
        case .bool(let v): try basic(&iter, DBusTypeCode.boolean, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try basic(&iter, DBusTypeCode.int16, v)
        case .uint16(let v): try basic(&iter, DBusTypeCode.uint16, v)
        case .int32(let v): try basic(&iter, DBusTypeCode.int32, v)
        case .uint32(let v): try basic(&iter, DBusTypeCode.uint32, v)
        case .int64(let v): try basic(&iter, DBusTypeCode.int64, v)
        case .uint64(let v): try basic(&iter, DBusTypeCode.uint64, v)
        case .double(let v): try basic(&iter, DBusTypeCode.double, v)
        case .unixFD(let fd): try basic(&iter, DBusTypeCode.unixFD, fd)
        case .string(let s): try string(&iter, DBusTypeCode.string, s)
        case .objectPath(let s): try string(&iter, DBusTypeCode.objectPath, s)
        case .signature(let s): try string(&iter, DBusTypeCode.signature, s)
        case .bytes(let bytes):
            try container(&iter, DBusTypeCode.array, "y") { (sub: inout DBusMessageIter) throws(DBusError) in
                guard !bytes.isEmpty else { return }
                let ok = bytes.withUnsafeBufferPointer { buf -> Bool in
                    var base = UnsafeRawPointer(buf.baseAddress)
                    return dbus_message_iter_append_fixed_array(&sub, DBusTypeCode.byte, &base, Int32(buf.count)) != 0
                }
                guard ok else { throw DBusError.outOfMemory }
            }
        case .array(let element, let items):
            try container(&iter, DBusTypeCode.array, element) { (sub: inout DBusMessageIter) throws(DBusError) in
                for item in items { try append(item, to: &sub) }
            }
        case .dictionary(let k, let v, let entries):
            try container(&iter, DBusTypeCode.array, "{" + k + v + "}") { (sub: inout DBusMessageIter) throws(DBusError) in
                for entry in entries {
                    try container(&sub, DBusTypeCode.dictEntry, nil) { (e: inout DBusMessageIter) throws(DBusError) in
                        try append(entry.key, to: &e)
                        try append(entry.value, to: &e)
                    }
                }
            }
        case .structure(let fields):
            try container(&iter, DBusTypeCode.structure, nil) { (sub: inout DBusMessageIter) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            try container(&iter, DBusTypeCode.variant, inner.signature) { (sub: inout DBusMessageIter) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
    }
}
