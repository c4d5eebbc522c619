/// One D-Bus value. Containers carry their element signatures so empty ones can be marshalled.
///
/// `unixFD` values read from a message are new descriptors owned by whoever holds the value (close them);
/// `unixFD` values sent are duplicated by libdbus, so the caller keeps ownership of its own descriptor.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(Int32)
    /// `ay`, the fast path for byte arrays (readers always produce this for `ay`).
    case bytes([UInt8])
    /// `a<element>`, any element type except dictionary entries.
    case array(elementSignature: String, [DBusValue])
    /// `a{<key><value>}`.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictEntry])
    /// `(...)`, at least one field.
    case structure([DBusValue])
    /// `v`.
    case variant(DBusValue)

    /// The D-Bus signature of this value (one complete type).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let k, let v, _): "a{" + k + v + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// True if this value or anything inside it is a unix fd.
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: true
        case .array(_, let items): items.contains { $0.containsUnixFD }
        case .dictionary(_, _, let entries): entries.contains { $0.key.containsUnixFD || $0.value.containsUnixFD }
        case .structure(let fields): fields.contains { $0.containsUnixFD }
        case .variant(let inner): inner.containsUnixFD
        default: false
        }
    }

    /// Checks that the value can be marshalled: valid paths and signatures, elements matching their
    /// declared signatures, bounded depth. Done before libdbus sees anything, since libdbus aborts on these.
    func validate(depth: Int = 0) throws(DBusError) {
        guard depth <= dbusMaxNestingDepth else { throw DBusError.invalidValue(DBusProblem(.nestingTooDeep, "nesting deeper than \(dbusMaxNestingDepth)")) }
        switch self {
        case .string(let s):
            if s.utf8.contains(0) { throw DBusError.invalidValue(DBusProblem(.nulInString)) }
        case .objectPath(let p):
            try DBusNames.check(p, .objectPath)
        case .signature(let s):
            try DBusNames.check(s, .signature)
        case .array(let element, let items):
            guard DBusNames.isValidSingleType(element), !element.hasPrefix("{") else {
                throw DBusError.invalidName(kind: .signature, value: element)
            }
            for item in items {
                guard item.signature == element else {
                    throw DBusError.invalidValue(DBusProblem(.elementTypeMismatch, "array element \(item.signature) in a\(element)"))
                }
                try item.validate(depth: depth + 1)
            }
        case .dictionary(let k, let v, let entries):
            guard DBusNames.isValidSingleType("a{" + k + v + "}") else {
                throw DBusError.invalidName(kind: .signature, value: "a{" + k + v + "}")
            }
            for e in entries {
                guard e.key.signature == k, e.value.signature == v else {
                    throw DBusError.invalidValue(DBusProblem(.elementTypeMismatch, "dictionary entry {\(e.key.signature)\(e.value.signature)} in a{\(k)\(v)}"))
                }
                try e.key.validate(depth: depth + 1)
                try e.value.validate(depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidValue(DBusProblem(.emptyStructure)) }
            for f in fields { try f.validate(depth: depth + 1) }
        case .variant(let inner):
            try inner.validate(depth: depth + 1)
        default:
            break
        }
    }
}

/// One `{key value}` entry of a D-Bus dictionary.
public struct DBusDictEntry: Sendable, Equatable {
    public var key: DBusValue
    public var value: DBusValue
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - Building

extension DBusValue {
    /// `a{sv}` from a property dictionary (keys sorted so the encoding is deterministic).
    public static func properties(_ dict: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", dict.keys.sorted().map { key in
            let value = dict[key] ?? .bool(false)
            let wrapped: DBusValue = if case .variant = value { value } else { .variant(value) }
            return DBusDictEntry(key: .string(key), value: wrapped)
        })
    }

    /// `as`.
    public static func strings(_ list: [String]) -> DBusValue {
        .array(elementSignature: "s", list.map { .string($0) })
    }

    /// `ao`.
    public static func objectPaths(_ list: [String]) -> DBusValue {
        .array(elementSignature: "o", list.map { .objectPath($0) })
    }

    /// `a{s<valueSignature>}`.
    public static func stringDictionary(valueSignature: String, _ dict: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: valueSignature, dict.keys.sorted().compactMap { key in
            guard let value = dict[key] else { return nil }
            return DBusDictEntry(key: .string(key), value: value)
        })
    }
}

// MARK: - Reading (all return nil on a type mismatch; variants are looked through)

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var v = self
        var depth = 0
        while case .variant(let inner) = v, depth < dbusMaxNestingDepth {
            v = inner
            depth += 1
        }
        return v
    }

    public var string: String? {
        if case .string(let s) = unwrapped { return s }
        return nil
    }
    public var objectPath: String? {
        if case .objectPath(let s) = unwrapped { return s }
        return nil
    }
    public var bool: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }
    public var uint8: UInt8? {
        if case .byte(let b) = unwrapped { return b }
        return nil
    }
    public var int16: Int16? {
        if case .int16(let n) = unwrapped { return n }
        return nil
    }
    public var uint16: UInt16? {
        if case .uint16(let n) = unwrapped { return n }
        return nil
    }
    public var int32: Int32? {
        if case .int32(let n) = unwrapped { return n }
        return nil
    }
    public var uint32: UInt32? {
        if case .uint32(let n) = unwrapped { return n }
        return nil
    }
    public var int64: Int64? {
        if case .int64(let n) = unwrapped { return n }
        return nil
    }
    public var uint64: UInt64? {
        if case .uint64(let n) = unwrapped { return n }
        return nil
    }
    public var doubleValue: Double? {
        if case .double(let n) = unwrapped { return n }
        return nil
    }
    public var unixFD: Int32? {
        if case .unixFD(let fd) = unwrapped { return fd }
        return nil
    }

    /// `ay` (either representation).
    public var bytes: [UInt8]? {
        switch unwrapped {
        case .bytes(let b): return b
        case .array("y", let items):
            var out: [UInt8] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard case .byte(let b) = item else { return nil }
                out.append(b)
            }
            return out
        default: return nil
        }
    }

    /// Elements of any array (`ay` gives `.byte` elements).
    public var arrayElements: [DBusValue]? {
        switch unwrapped {
        case .array(_, let items): return items
        case .bytes(let b): return b.map { .byte($0) }
        default: return nil
        }
    }

    /// `as`.
    public var strings: [String]? {
        guard let items = arrayElements else { return nil }
        var out: [String] = []
        for item in items {
            guard let s = item.string else { return nil }
            out.append(s)
        }
        return out
    }

    /// Fields of a struct.
    public var structFields: [DBusValue]? {
        if case .structure(let f) = unwrapped { return f }
        return nil
    }

    /// Entries of a dictionary.
    public var dictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let e) = unwrapped { return e }
        return nil
    }

    /// A dictionary with string (or object path) keys, values kept as they are (variants not unwrapped).
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var out: [String: DBusValue] = [:]
        for e in entries {
            guard let k = e.key.string ?? e.key.objectPath else { return nil }
            out[k] = e.value
        }
        return out
    }

    /// `a{sv}` as a property dictionary with the variant wrappers removed.
    public var properties: [String: DBusValue]? {
        guard let dict = stringKeyedDictionary else { return nil }
        return dict.mapValues(\.unwrapped)
    }
}
