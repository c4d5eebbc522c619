import Foundation

/// Checks objects against docs/json-events.schema.json. It understands the part of JSON Schema
/// that file uses (oneOf over event kinds with `const`, `required`, `type`, `additionalProperties`),
/// and fails loudly on anything else, so the schema cannot silently outgrow the check.
struct JSONSchemaSubset {
    struct Variant {
        let event: String
        let properties: [String: [String]]   // name -> allowed JSON types
        let required: Set<String>
        let closed: Bool
    }

    let variants: [String: Variant]

    static func load() throws -> JSONSchemaSubset {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/json-events.schema.json")
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        var variants: [String: Variant] = [:]
        for case let branch as [String: Any] in root["oneOf"] as? [Any] ?? [] {
            let props = branch["properties"] as? [String: [String: Any]] ?? [:]
            guard let event = props["event"]?["const"] as? String else { throw SchemaError.unsupported("oneOf branch without event const") }
            var types: [String: [String]] = [:]
            for (name, spec) in props where name != "event" {
                if let one = spec["type"] as? String { types[name] = [one] } else if let many = spec["type"] as? [String] { types[name] = many } else {
                    throw SchemaError.unsupported("\(event).\(name) has no type")
                }
            }
            variants[event] = Variant(event: event, properties: types, required: Set(branch["required"] as? [String] ?? []),
                                      closed: (branch["additionalProperties"] as? Bool) == false)
        }
        guard !variants.isEmpty else { throw SchemaError.unsupported("no variants") }
        return JSONSchemaSubset(variants: variants)
    }

    enum SchemaError: Error { case unsupported(String) }

    func violations(of object: [String: Any]) -> [String] {
        guard let event = object["event"] as? String else { return ["no event"] }
        guard let variant = variants[event] else { return ["unknown event \(event)"] }
        var problems: [String] = []
        for name in variant.required where object[name] == nil { problems.append("missing \(name)") }
        for (name, value) in object where name != "event" {
            guard let allowed = variant.properties[name] else {
                if variant.closed { problems.append("unexpected \(name)") }
                continue
            }
            if !allowed.contains(where: { Self.matches(value, $0) }) { problems.append("\(name) is not \(allowed)") }
        }
        return problems
    }

    static func matches(_ value: Any, _ type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "string": return value is String
        case "boolean": return isBoolean(value)
        case "integer":
            guard let n = value as? NSNumber, !isBoolean(value) else { return false }
            return n.doubleValue == n.doubleValue.rounded()
        case "number": return value is NSNumber && !isBoolean(value)
        case "array": return value is [Any]
        case "object": return value is [String: Any]
        default: return false
        }
    }

    /// Whether `value` was a JSON `true` or `false`: on Linux a parsed 0 or 1 casts to `Bool` too,
    /// so the number's own type tells them apart.
    static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return value is Bool }
        return String(cString: number.objCType) == "c"
    }
}
