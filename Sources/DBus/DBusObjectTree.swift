import Synchronization

/// A set of exported objects under one root path, with their properties, answering the standard
/// `Properties.Get/GetAll/Set`, `ObjectManager.GetManagedObjects` (on the root) and `Introspect`,
/// and routing every other call to a method registered with `setMethod`.
public final class DBusObjectTree: Sendable {
    public typealias Method = @Sendable (DBusMessage) async throws -> [DBusValue]

    public let root: String

    private struct Object {
        var interfaces: [String: [String: DBusValue]] = [:]
        var methods: [String: Method] = [:]  // "interface.member"
    }
    private let objects = Mutex<[String: Object]>([:])

    public init(root: String) throws(DBusError) {
        try DBusNames.check(root, .objectPath)
        self.root = root
    }

    /// Adds or replaces an object's interfaces and properties (methods are kept).
    public func setObject(path: String, interfaces: [String: [String: DBusValue]]) throws(DBusError) {
        try DBusNames.check(path, .objectPath)
        for name in interfaces.keys { try DBusNames.check(name, .interface) }
        objects.withLock { $0[path, default: Object()].interfaces = interfaces }
    }

    public func removeObject(path: String) {
        _ = objects.withLock { $0.removeValue(forKey: path) }
    }

    public func setMethod(path: String, interface: String, member: String, _ method: @escaping Method) throws(DBusError) {
        try DBusNames.check(path, .objectPath)
        try DBusNames.check(interface, .interface)
        try DBusNames.check(member, .member)
        objects.withLock { $0[path, default: Object()].methods[interface + "." + member] = method }
    }

    /// Sets one property; returns false if the object or interface does not exist.
    @discardableResult
    public func setProperty(path: String, interface: String, name: String, value: DBusValue) -> Bool {
        objects.withLock { objs in
            guard objs[path]?.interfaces[interface] != nil else { return false }
            objs[path]?.interfaces[interface]?[name] = value.unwrapped
            return true
        }
    }

    public func property(path: String, interface: String, name: String) -> DBusValue? {
        objects.withLock { $0[path]?.interfaces[interface]?[name] }
    }

    /// `a{oa{sa{sv}}}` of every object that has at least one interface.
    public func managedObjects() -> DBusValue {
        let snapshot = objects.withLock { $0 }
        let entries = snapshot.keys.sorted().compactMap { path -> DBusDictEntry? in
            guard let obj = snapshot[path], !obj.interfaces.isEmpty else { return nil }
            let ifaces = obj.interfaces.keys.sorted().map { name in
                DBusDictEntry(key: .string(name), value: .properties(obj.interfaces[name] ?? [:]))
            }
            return DBusDictEntry(
                key: .objectPath(path),
                value: .dictionary(keySignature: "s", valueSignature: "a{sv}", ifaces))
        }
        return .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries)
    }

    /// Exports the tree's root subtree on `connection`.
    /// With `transfersFDs`, unix fds returned by methods are closed after the reply is sent.
    /// With `callers`, a call from any connection but the one it admits is answered
    /// `org.freedesktop.DBus.Error.AccessDenied`, and nothing of the tree runs or is read for it.
    public func export(on connection: DBusConnection, transfersFDs: Bool = false, callers: DBusCallerCheck? = nil) async throws(DBusError) {
        try await connection.export(path: root, subtree: true, transfersFDs: transfersFDs) { [self, weak connection] call in
            if let callers {
                guard let connection, await callers.admits(call.sender, on: connection) else { throw callers.refusal(of: call.sender) }
            }
            return try await self.handle(call)
        }
    }

    /// Answers one method call.
    public func handle(_ call: DBusMessage) async throws -> [DBusValue] {
        let path = call.path ?? ""
        let member = call.member ?? ""
        let interface = call.interface ?? ""
        let object = objects.withLock { $0[path] }

        switch (interface, member) {
        case (dbusObjectManagerInterface, "GetManagedObjects") where path == root:
            return [managedObjects()]
        case (dbusIntrospectableInterface, "Introspect"):
            return [.string(introspection(path: path, object: object))]
        case (dbusPropertiesInterface, "Get"):
            guard let object else { throw DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: path) }
            guard let iface = try call.argument(0).string, let name = try call.argument(1).string else {
                throw DBusErrorReply.invalidArgs("expected (ss)")
            }
            guard let props = object.interfaces[iface] else { throw DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownInterface", message: iface) }
            guard let value = props[name] else { throw DBusErrorReply.unknownProperty(name) }
            return [.variant(value)]
        case (dbusPropertiesInterface, "GetAll"):
            guard let object else { throw DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: path) }
            guard let iface = try call.argument(0).string else { throw DBusErrorReply.invalidArgs("expected (s)") }
            return [.properties(object.interfaces[iface] ?? [:])]
        case (dbusPropertiesInterface, "Set"):
            throw DBusErrorReply(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "properties are read-only")
        default:
            let key = interface + "." + member
            if let method = object?.methods[key] { return try await method(call) }
            if interface.isEmpty, let match = object?.methods.first(where: { $0.key.hasSuffix("." + member) }) {
                return try await match.value(call)
            }
            if object == nil {
                throw DBusErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object at \(path)")
            }
            throw DBusErrorReply.unknownMethod("\(key) not implemented at \(path)")
        }
    }

    private func introspection(path: String, object: Object?) -> String {
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" "
            + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        for name in (object?.interfaces.keys.sorted() ?? []) { xml += "  <interface name=\"\(name)\"/>\n" }
        let prefix = path == "/" ? "/" : path + "/"
        let children = objects.withLock { objs in
            Set(objs.keys.filter { $0.hasPrefix(prefix) }.compactMap { $0.dropFirst(prefix.count).split(separator: "/").first.map(String.init) })
        }
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
