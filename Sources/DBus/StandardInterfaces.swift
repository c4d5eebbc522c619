/// The standard interfaces (`org.freedesktop.DBus.Properties`, `...ObjectManager`): typed signals and calls.

public let dbusPropertiesInterface = "org.freedesktop.DBus.Properties"
public let dbusObjectManagerInterface = "org.freedesktop.DBus.ObjectManager"
public let dbusIntrospectableInterface = "org.freedesktop.DBus.Introspectable"

/// `a{oa{sa{sv}}}` as Swift: object path -> interface -> property -> value (variants removed).
public typealias DBusManagedObjects = [String: [String: [String: DBusValue]]]

/// `InterfacesAdded` / `InterfacesRemoved`.
public enum DBusObjectManagerEvent: Sendable, Equatable {
    case added(path: String, interfaces: [String: [String: DBusValue]])
    case removed(path: String, interfaces: [String])

    public init?(_ m: DBusMessage) {
        guard m.kind == .signal, m.interface == dbusObjectManagerInterface, m.arguments.count == 2,
              let path = m.arguments[0].objectPath else { return nil }
        switch m.member {
        case "InterfacesAdded":
            guard let ifaces = DBusObjectManagerEvent.interfaces(m.arguments[1]) else { return nil }
            self = .added(path: path, interfaces: ifaces)
        case "InterfacesRemoved":
            guard let names = m.arguments[1].strings else { return nil }
            self = .removed(path: path, interfaces: names)
        default:
            return nil
        }
    }

    /// `a{sa{sv}}` -> interface -> properties.
    static func interfaces(_ v: DBusValue) -> [String: [String: DBusValue]]? {
        guard let dict = v.stringKeyedDictionary else { return nil }
        var out: [String: [String: DBusValue]] = [:]
        for (name, props) in dict {
            guard let p = props.properties else { return nil }
            out[name] = p
        }
        return out
    }
}

/// `PropertiesChanged`.
public struct DBusPropertiesChanged: Sendable, Equatable {
    public var path: String
    public var interface: String
    public var changed: [String: DBusValue]
    public var invalidated: [String]

    public init?(_ m: DBusMessage) {
        guard m.kind == .signal, m.interface == dbusPropertiesInterface, m.member == "PropertiesChanged",
              let path = m.path, m.arguments.count == 3, let iface = m.arguments[0].string,
              let changed = m.arguments[1].properties, let invalidated = m.arguments[2].strings else { return nil }
        self.path = path
        self.interface = iface
        self.changed = changed
        self.invalidated = invalidated
    }
}

extension DBusConnection {
    /// `InterfacesAdded`/`InterfacesRemoved` from `sender` (e.g. "org.bluez").
    public func objectManagerEvents(sender: String? = nil, path: String? = nil) async throws(DBusError)
        -> AsyncStream<DBusObjectManagerEvent>
    {
        try await subscribe(DBusMatchRule(sender: sender, interface: dbusObjectManagerInterface, path: path)) {
            DBusObjectManagerEvent($0)
        }
    }

    /// `PropertiesChanged` signals, optionally for one path, a path namespace and/or one interface (arg0).
    public func propertiesChanged(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil
    ) async throws(DBusError) -> AsyncStream<DBusPropertiesChanged> {
        let rule = DBusMatchRule(
            sender: sender, interface: dbusPropertiesInterface, member: "PropertiesChanged",
            path: path, pathNamespace: pathNamespace, arg0: interface)
        return try await subscribe(rule) { DBusPropertiesChanged($0) }
    }

    /// `GetManagedObjects`.
    public func managedObjects(destination: String, path: String = "/", timeout: Duration = .seconds(25))
        async throws(DBusError) -> DBusManagedObjects
    {
        let reply = try await call(
            destination: destination, path: path, interface: dbusObjectManagerInterface,
            member: "GetManagedObjects", timeout: timeout)
        guard let first = reply.first, let dict = first.stringKeyedDictionary else {
            throw DBusError.malformedMessage(DBusProblem(.unexpectedReply, "GetManagedObjects reply \(reply.map(\.signature).joined())"))
        }
        var out: DBusManagedObjects = [:]
        for (objectPath, ifaces) in dict {
            guard let parsed = DBusObjectManagerEvent.interfaces(ifaces) else {
                throw DBusError.malformedMessage(DBusProblem(.unexpectedReply, "GetManagedObjects entry for \(objectPath)"))
            }
            out[objectPath] = parsed
        }
        return out
    }

    /// `Properties.Get` (variant removed).
    public func property(destination: String, path: String, interface: String, name: String) async throws(DBusError)
        -> DBusValue
    {
        let reply = try await call(
            destination: destination, path: path, interface: dbusPropertiesInterface, member: "Get",
            arguments: [.string(interface), .string(name)])
        guard let v = reply.first else { throw DBusError.malformedMessage(DBusProblem(.unexpectedReply, "empty Get reply")) }
        return v.unwrapped
    }

    /// `Properties.GetAll` (variants removed).
    public func allProperties(destination: String, path: String, interface: String) async throws(DBusError)
        -> [String: DBusValue]
    {
        let reply = try await call(
            destination: destination, path: path, interface: dbusPropertiesInterface, member: "GetAll",
            arguments: [.string(interface)])
        guard let props = reply.first?.properties else { throw DBusError.malformedMessage(DBusProblem(.unexpectedReply, "GetAll reply")) }
        return props
    }

    /// `Properties.Set`.
    public func setProperty(destination: String, path: String, interface: String, name: String, value: DBusValue)
        async throws(DBusError)
    {
        _ = try await call(
            destination: destination, path: path, interface: dbusPropertiesInterface, member: "Set",
            arguments: [.string(interface), .string(name), .variant(value.unwrapped)])
    }

    /// Emits `PropertiesChanged` for `path`.
    public func emitPropertiesChanged(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws(DBusError) {
        try emitSignal(
            path: path, interface: dbusPropertiesInterface, member: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .strings(invalidated)])
    }
}
