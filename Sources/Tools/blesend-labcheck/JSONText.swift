import Foundation

/// A value of a JSON object (as `JSONSerialization` gives it) as the lab's shell reads it: strings
/// as they are, numbers as JSON writes them (`4096`, `30.1`), `true`/`false`, `null`; arrays and
/// objects as compact JSON.
func jsonText(_ value: Any) -> String {
    switch value {
    case is NSNull:
        return "null"
    case let s as String:
        return s
    case let n as NSNumber:
        return numberText(n)
    default:
        guard JSONSerialization.isValidJSONObject(value),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }
}

private func numberText(_ n: NSNumber) -> String {
    // A JSON boolean arrives as an NSNumber too, of type "c" (integers come as "i", "q" or "Q").
    switch String(cString: n.objCType) {
    case "c": return n.boolValue ? "true" : "false"
    case "d", "f": return "\(n.doubleValue)"
    case "Q": return "\(n.uint64Value)"
    default: return "\(n.int64Value)"
    }
}

/// One condition on an object's field, as the lab writes it: `KEY=VALUE` (the field's text is
/// VALUE), `KEY~TEXT` (its text contains TEXT) or `KEY` (the field is there, whatever its value).
struct FieldCondition {
    enum Test { case equals(String), contains(String), present }
    let key: String
    let test: Test

    init(_ spec: String) {
        if let i = spec.firstIndex(where: { $0 == "=" || $0 == "~" }) {
            key = String(spec[..<i])
            let rest = String(spec[spec.index(after: i)...])
            test = spec[i] == "=" ? .equals(rest) : .contains(rest)
        } else {
            key = spec
            test = .present
        }
    }

    func holds(for object: [String: Any]) -> Bool {
        guard let value = object[key] else { return false }
        switch test {
        case .present: return true
        case .equals(let text): return jsonText(value) == text
        case .contains(let text): return jsonText(value).contains(text)
        }
    }
}
