/// One newline-delimited JSON event (docs/json-events.md), with keys in a fixed order: `event`
/// first, then `v` (the contract's version), then the fields as given. Every line either tool writes
/// on stdout with `--json` is one of these (`doctor --json` included).
struct JSONLine {
    /// The `v` of every line: version 1 of the contract in docs/json-events.md. Fields may be added
    /// within it; it goes up only when a field or event that `required` lists changes or goes.
    static let version: Int64 = 1

    enum Value {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case null
        case array([Value])
        /// Keys in the order given.
        case object([(String, Value)])
    }

    var fields: [(String, Value)]

    init(_ event: String, _ fields: [(String, Value)] = []) {
        self.fields = [("event", .string(event)), ("v", .int(Self.version))] + fields
    }

    var text: String { Self.render(.object(fields)) }

    static func render(_ value: Value) -> String {
        switch value {
        case .string(let s): quote(s)
        case .int(let i): String(i)
        case .double(let d): d.isFinite ? String(d) : "null"
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .array(let items): "[" + items.map(render).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { "\(quote($0.0)):\(render($0.1))" }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where TerminalText.isHazardous(scalar):
                // Every control, format or separator character as \uXXXX (UTF-16, so a character
                // beyond the BMP becomes a surrogate pair): valid JSON that no terminal acts on.
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension JSONLine {
    /// The `error` event: `code` (the status's stable kebab-case name, docs/json-events.md),
    /// `exit`, `summary` (the status in words), `message`, `hint`. Written by Reporter.error, and
    /// for a usage error (UsageErrorEvent) and a signal (Interrupts), which have no Reporter.
    static func error(_ status: ExitStatus, message: String, hint: String?) -> JSONLine {
        JSONLine("error", [
            ("code", .string(status.code)), ("exit", .int(Int64(status.rawValue))), ("summary", .string(status.summary)),
            ("message", .string(message)), ("hint", .of(hint)),
        ])
    }
}

extension JSONLine.Value {
    static func of(_ value: UInt64?) -> JSONLine.Value { value.map { .int(Int64(clamping: $0)) } ?? .null }
    static func of(_ value: String?) -> JSONLine.Value { value.map { .string($0) } ?? .null }
}
