import CDBus
import Glibc

/// Reads a libdbus message body into `DBusValue`s. Defensive: unknown type codes, missing values and
/// too-deep nesting give `DBusError.malformedMessage`; file descriptors already taken are closed on failure.
struct MessageReader {
    private var fds: [Int32] = []

    static func read(_ message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var reader = MessageReader()
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        do {
            while dbus_message_iter_get_arg_type(&iter) != DBusTypeCode.invalid {
                values.append(try reader.value(&iter, depth: 0))
                if dbus_message_iter_next(&iter) == 0 { break }
            }
        } catch {
            for fd in reader.fds { close(fd) }
            throw error
        }
        return values
    }

    private func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(&iter, &v)
        return v
    }

    private func string(_ iter: inout DBusMessageIter) throws(DBusError) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { throw DBusError.malformedMessage(DBusProblem(.nullString)) }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: strlen(p)), as: UTF8.self)
    }

    /// The complete type signature at `iter` (e.g. "a{sv}" for an array of dict entries).
    private func signature(_ iter: inout DBusMessageIter) throws(DBusError) -> String {
        guard let p = dbus_message_iter_get_signature(&iter) else { throw DBusError.outOfMemory }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    private mutating func value(_ iter: inout DBusMessageIter, depth: Int) throws(DBusError) -> DBusValue {
        guard depth <= dbusMaxNestingDepth else { throw DBusError.malformedMessage(DBusProblem(.nestingTooDeep)) }
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case DBusTypeCode.byte: return .byte(basic(&iter, UInt8(0)))
        case DBusTypeCode.boolean: return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case DBusTypeCode.int16: return .int16(basic(&iter, Int16(0)))
        case DBusTypeCode.uint16: return .uint16(basic(&iter, UInt16(0)))
        case DBusTypeCode.int32: return .int32(basic(&iter, Int32(0)))
        case DBusTypeCode.uint32: return .uint32(basic(&iter, UInt32(0)))
        case DBusTypeCode.int64: return .int64(basic(&iter, Int64(0)))
        case DBusTypeCode.uint64: return .uint64(basic(&iter, UInt64(0)))
        case DBusTypeCode.double: return .double(basic(&iter, Double(0)))
        case DBusTypeCode.string: return .string(try string(&iter))
        case DBusTypeCode.objectPath: return .objectPath(try string(&iter))
        case DBusTypeCode.signature: return .signature(try string(&iter))
        case DBusTypeCode.unixFD:
            let fd = basic(&iter, Int32(-1))
            guard fd >= 0 else { throw DBusError.malformedMessage(DBusProblem(.invalidUnixFD)) }
            fds.append(fd)
            return .unixFD(fd)
        case DBusTypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard dbus_message_iter_get_arg_type(&sub) != DBusTypeCode.invalid else {
                throw DBusError.malformedMessage(DBusProblem(.emptyVariant))
            }
            return .variant(try value(&sub, depth: depth + 1))
        case DBusTypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != DBusTypeCode.invalid {
                fields.append(try value(&sub, depth: depth + 1))
                if dbus_message_iter_next(&sub) == 0 { break }
            }
            guard !fields.isEmpty else { throw DBusError.malformedMessage(DBusProblem(.emptyStructure)) }
            return .structure(fields)
        case DBusTypeCode.array:
            return try array(&iter, depth: depth)
        default:
            throw DBusError.malformedMessage(DBusProblem(.unexpectedTypeCode, "type code \(type)"))
        }
    }

    private mutating func array(_ iter: inout DBusMessageIter, depth: Int) throws(DBusError) -> DBusValue {
        let sig = try signature(&iter)
        guard sig.hasPrefix("a"), DBusNames.isValidSingleType(sig) else {
            throw DBusError.malformedMessage(DBusProblem(.badSignature, "array signature \(sig)"))
        }
        let elementSignature = String(sig.dropFirst())
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)

        if elementType == DBusTypeCode.byte {
            var base: UnsafeRawPointer? = nil
            var count: Int32 = 0
            if dbus_message_iter_get_arg_type(&sub) != DBusTypeCode.invalid {
                dbus_message_iter_get_fixed_array(&sub, &base, &count)
            }
            guard count > 0, let base else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: base, count: Int(count))))
        }

        if elementType == DBusTypeCode.dictEntry {
            // "{KV}": K is one basic type code, V one complete type.
            guard elementSignature.count >= 4, elementSignature.hasPrefix("{"), elementSignature.hasSuffix("}") else {
                throw DBusError.malformedMessage(DBusProblem(.badSignature, "dict signature \(sig)"))
            }
            let inner = elementSignature.dropFirst().dropLast()
            let keySignature = String(inner.prefix(1))
            let valueSignature = String(inner.dropFirst())
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == DBusTypeCode.dictEntry {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                guard dbus_message_iter_get_arg_type(&entry) != DBusTypeCode.invalid else {
                    throw DBusError.malformedMessage(DBusProblem(.incompleteDictEntry, "no key"))
                }
                let key = try value(&entry, depth: depth + 2)
                guard dbus_message_iter_next(&entry) != 0 else { throw DBusError.malformedMessage(DBusProblem(.incompleteDictEntry, "no value")) }
                let val = try value(&entry, depth: depth + 2)
                entries.append(DBusDictEntry(key: key, value: val))
                if dbus_message_iter_next(&sub) == 0 { break }
            }
            return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
        }

        var items: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != DBusTypeCode.invalid {
            items.append(try value(&sub, depth: depth + 1))
            if dbus_message_iter_next(&sub) == 0 { break }
        }
        return .array(elementSignature: elementSignature, items)
    }
}
