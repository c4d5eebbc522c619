import Foundation

/// Checks `--json` lines against docs/json-events.schema.json, for the unit tests and for the lab
/// (`blesend-labcheck schema`). It knows the part of JSON Schema 2020-12 that file uses: `type`,
/// `const`, `enum`, `pattern`, `required`, `properties`, `additionalProperties` (false only),
/// `items` and `oneOf`; a schema with any other keyword is refused when loaded, so the schema
/// cannot silently outgrow the check.
///
/// A `oneOf` whose every branch fixes `event` with a `const` (the events) is chosen by the value's
/// `event`, so a bad line is told as "error: missing exit", not as "matches none of 32 branches".
public struct EventSchema {
    let root: Node

    public init(data: Data) throws(SchemaError) {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch { throw .unsupported("not JSON: \(error)") }
        root = try Node(object, at: "#")
    }

    public init(contentsOf path: String) throws(SchemaError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        try self.init(data: data)
    }

    public enum SchemaError: Error, Equatable {
        case unreadable(String)
        case unsupported(String)
    }

    /// The events the schema describes (the `const` of each branch of the top `oneOf`).
    public var events: [String] { root.oneOf?.compactMap { $0.eventConstant } ?? [] }

    /// The fields an event must have: the top level's (`event`, `v`) and its branch's.
    public func required(of event: String) -> Set<String> {
        Set(root.required + (root.oneOf?.first { $0.eventConstant == event }?.required ?? []))
    }

    /// What is wrong with `value` (a `JSONSerialization` result, or a dictionary literal);
    /// empty when it matches.
    public func violations(of value: Any) -> [String] {
        guard let json = JSON(value) else { return ["not a JSON value: \(value)"] }
        return root.violations(of: json, at: "")
    }

    /// What is wrong with one line of a `--json` log; empty when it is one object that matches.
    public func violations(ofLine line: String) -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(line.utf8)) else { return ["not JSON"] }
        return violations(of: value)
    }
}

/// A JSON value, with booleans told apart from numbers (on Linux a parsed 0 or 1 casts to Bool).
enum JSON: Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSON]), object([String: JSON])

    init?(_ any: Any) {
        switch any {
        case is NSNull: self = .null
        case let b as Bool where type(of: any) == Bool.self: self = .bool(b)
        case let s as String: self = .string(s)
        case let n as NSNumber:
            self = String(cString: n.objCType) == "c" ? .bool(n.boolValue) : .number(n.doubleValue)
        case let items as [Any]:
            var out: [JSON] = []
            for item in items {
                guard let value = JSON(item) else { return nil }
                out.append(value)
            }
            self = .array(out)
        case let fields as [String: Any]:
            var out: [String: JSON] = [:]
            for (key, item) in fields {
                guard let value = JSON(item) else { return nil }
                out[key] = value
            }
            self = .object(out)
        default: return nil
        }
    }

    func hasType(_ type: String) -> Bool {
        switch (type, self) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object), ("number", .number): true
        case ("integer", .number(let n)): n.isFinite && n == n.rounded()
        default: false
        }
    }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let n): n == n.rounded() ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// One schema object, its keywords read once.
final class Node {
    static let known: Set<String> = ["$schema", "$id", "title", "description", "$comment",
                                     "type", "const", "enum", "pattern", "required", "properties", "additionalProperties", "items", "oneOf"]
    static let types: Set<String> = ["null", "boolean", "integer", "number", "string", "array", "object"]

    let types: [String]?
    let constant: JSON?
    let enumeration: [JSON]?
    let pattern: NSRegularExpression?
    let required: [String]
    let properties: [String: Node]
    let closed: Bool
    let items: Node?
    let oneOf: [Node]?

    init(_ any: Any, at path: String) throws(EventSchema.SchemaError) {
        guard let object = any as? [String: Any] else { throw .unsupported("\(path) is not a schema object") }
        if let unknown = Set(object.keys).subtracting(Self.known).sorted().first { throw .unsupported("\(path): keyword \(unknown)") }
        switch object["type"] {
        case nil: types = nil
        case let one as String: types = [one]
        case let many as [String]: types = many
        default: throw .unsupported("\(path): type")
        }
        if let bad = types?.first(where: { !Self.types.contains($0) }) { throw .unsupported("\(path): type \(bad)") }
        constant = try object["const"].map { value throws(EventSchema.SchemaError) in
            guard let json = JSON(value) else { throw .unsupported("\(path): const") }
            return json
        }
        if let values = object["enum"] {
            guard let list = values as? [Any], let json = JSON(list), case .array(let items) = json else { throw .unsupported("\(path): enum") }
            enumeration = items
        } else {
            enumeration = nil
        }
        if let text = object["pattern"] {
            guard let text = text as? String, let regex = try? NSRegularExpression(pattern: text) else { throw .unsupported("\(path): pattern") }
            pattern = regex
        } else {
            pattern = nil
        }
        guard object["required"] == nil || object["required"] is [String] else { throw .unsupported("\(path): required") }
        required = object["required"] as? [String] ?? []
        var properties: [String: Node] = [:]
        if let props = object["properties"] {
            guard let props = props as? [String: Any] else { throw .unsupported("\(path): properties") }
            for (name, spec) in props { properties[name] = try Node(spec, at: "\(path)/properties/\(name)") }
        }
        self.properties = properties
        if let flag = object["additionalProperties"] {
            guard case .bool(let open)? = JSON(flag) else { throw .unsupported("\(path): additionalProperties other than a boolean") }
            closed = !open
        } else {
            closed = false
        }
        items = try object["items"].map { spec throws(EventSchema.SchemaError) in try Node(spec, at: "\(path)/items") }
        if let branches = object["oneOf"] {
            guard let branches = branches as? [Any] else { throw .unsupported("\(path): oneOf") }
            var nodes: [Node] = []
            for (i, branch) in branches.enumerated() { nodes.append(try Node(branch, at: "\(path)/oneOf/\(i)")) }
            oneOf = nodes
        } else {
            oneOf = nil
        }
    }

    /// The `event` this node fixes with a `const`, if it does.
    var eventConstant: String? {
        if case .string(let name)? = properties["event"]?.constant { return name }
        return nil
    }

    func violations(of value: JSON, at path: String) -> [String] {
        let here = path.isEmpty ? "" : path + ": "
        if let types, !types.contains(where: value.hasType) {
            return ["\(here)\(value.typeName), want \(types.joined(separator: " or "))"]
        }
        var problems: [String] = []
        if let constant, value != constant { problems.append("\(here)not \(constant.text)") }
        if let enumeration, !enumeration.contains(value) {
            problems.append("\(here)\(value.text) is not one of \(enumeration.map(\.text).joined(separator: ", "))")
        }
        if let pattern, case .string(let s) = value,
            pattern.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
            problems.append("\(here)\(value.text) does not match \(pattern.pattern)")
        }
        if case .object(let fields) = value {
            let prefix = path.isEmpty ? "" : path + "."
            for name in required where fields[name] == nil { problems.append("missing \(prefix)\(name)") }
            for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
                if let node = properties[name] {
                    problems += node.violations(of: field, at: prefix + name)
                } else if closed {
                    problems.append("unexpected \(prefix)\(name)")
                }
            }
        }
        if let items, case .array(let elements) = value {
            for (i, element) in elements.enumerated() { problems += items.violations(of: element, at: "\(path)[\(i)]") }
        }
        if let oneOf { problems += oneOfViolations(oneOf, value, at: path) }
        return problems
    }

    private func oneOfViolations(_ branches: [Node], _ value: JSON, at path: String) -> [String] {
        let events = branches.compactMap(\.eventConstant)
        if events.count == branches.count {
            guard case .object(let fields) = value, let event = fields["event"] else { return [] }   // `required` says it is missing
            guard let branch = branches.first(where: { $0.properties["event"]?.constant == event }) else {
                return ["unknown event \(event.text)"]
            }
            return branch.violations(of: value, at: path)
        }
        let matching = branches.filter { $0.violations(of: value, at: path).isEmpty }.count
        return matching == 1 ? [] : ["\(path.isEmpty ? "" : path + ": ")matches \(matching) of the \(branches.count) oneOf branches, want 1"]
    }
}

extension JSON {
    /// Compact JSON text, for messages.
    var text: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .string(let s): "\"" + s + "\""
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value.text)" }.joined(separator: ",") + "}"
        }
    }
}
