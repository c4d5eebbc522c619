import DBus
import Synchronization

/// A stand-in for bluetoothd on a private bus: it owns `org.bluez` (and can let it go and take it
/// back, as a restarting bluetoothd does), serves one powered adapter with the GATT and advertising
/// managers, and reads a registered application back with `GetManagedObjects`, as bluetoothd does.
///
/// The adapter object carries what bluetoothd 5.66 shows for an LE controller: `Adapter1` with
/// `Powered`, `Address`, `AddressType`, `Name`, `Alias` and `Roles`, `GattManager1`, and `LEAdvertisingManager1`
/// with `SupportedInstances` and `ActiveInstances`. The D-Bus names are spelled out here rather
/// than taken from the BlueZ module, so a typo there shows up as a failing test.
public final class FakeBluetoothd: Sendable {
    public static let adapter = "/org/bluez/hci0"
    static let service = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"

    public struct StandInError: Error, CustomStringConvertible {
        public var description: String
    }

    public let connection: DBusConnection
    public let tree: DBusObjectTree
    /// The manager calls received, in order ("RegisterApplication", ...).
    public let calls = Mutex<[String]>([])
    /// What `GetManagedObjects` answered at the last `RegisterApplication`.
    public let application = Mutex<DBusManagedObjects?>(nil)
    /// The connection that registered the application.
    public let peripheral = Mutex<String?>(nil)
    /// The connections with an advertisement registered.
    public let advertisers = Mutex<Set<String>>([])
    /// The properties of every advertisement registered, in order, as read at registration.
    public let advertisements = Mutex<[[String: DBusValue]]>([])
    /// Runs inside `RegisterAdvertisement`, before it answers.
    public let whileRegisteringAdvertisement = Mutex<(@Sendable () async throws -> Void)?>(nil)

    /// - Parameters:
    ///   - roles: `Adapter1.Roles`; nil leaves the property out, as bluetoothd before it had one.
    ///   - advertisingInstances: `LEAdvertisingManager1`'s `SupportedInstances`; nil leaves the
    ///     interface out, as bluetoothd does for a controller without LE.
    public init(address: String, roles: [String]? = ["central", "peripheral"], advertisingInstances: UInt8? = 5) async throws {
        connection = try await DBusConnection.connect(.address(address))
        tree = try DBusObjectTree(root: "/")
        var adapterProperties: [String: DBusValue] = [
            "Powered": .bool(true), "Address": .string("00:AA:01:00:00:00"), "AddressType": .string("public"),
            "Name": .string("BlueZ 5.66"), "Alias": .string("BlueZ 5.66"),
        ]
        if let roles { adapterProperties["Roles"] = .strings(roles) }
        var interfaces: [String: [String: DBusValue]] = [Self.adapterInterface: adapterProperties, Self.gattManager: [:]]
        if let advertisingInstances {
            interfaces[Self.advertisingManager] = [
                "SupportedInstances": .byte(advertisingInstances), "ActiveInstances": .byte(0),
                "SupportedIncludes": .strings(["tx-power", "appearance", "local-name"]),
            ]
        }
        try tree.setObject(path: Self.adapter, interfaces: interfaces)
        try tree.setMethod(path: Self.adapter, interface: Self.gattManager, member: "RegisterApplication") { [self] call in
            record("RegisterApplication")
            guard let sender = call.sender, let path = try call.argument(0).objectPath else { throw DBusErrorReply.invalidArgs("(oa{sv})") }
            let objects = try await connection.managedObjects(destination: sender, path: path)
            application.withLock { $0 = objects }
            peripheral.withLock { $0 = sender }
            return []
        }
        // As bluetoothd: a second advertisement from the same connection and path is refused.
        try tree.setMethod(path: Self.adapter, interface: Self.advertisingManager, member: "RegisterAdvertisement") { [self] call in
            record("RegisterAdvertisement")
            if let during = whileRegisteringAdvertisement.withLock({ $0 }) { try await during() }
            let sender = call.sender ?? ""
            guard advertisers.withLock({ $0.insert(sender).inserted }) else {
                throw DBusErrorReply(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
            }
            // As bluetoothd does: read the advertisement's properties at registration.
            if let path = try call.argument(0).objectPath,
               let properties = try? await connection.allProperties(destination: sender, path: path, interface: "org.bluez.LEAdvertisement1") {
                advertisements.withLock { $0.append(properties) }
            }
            return []
        }
        try tree.setMethod(path: Self.adapter, interface: Self.advertisingManager, member: "UnregisterAdvertisement") { [self] call in
            record("UnregisterAdvertisement")
            _ = advertisers.withLock { $0.remove(call.sender ?? "") }
            return []
        }
        for (iface, member) in [(Self.gattManager, "UnregisterApplication")] {
            try tree.setMethod(path: Self.adapter, interface: iface, member: member) { [self] _ in
                record(member)
                return []
            }
        }
        try await tree.export(on: connection)
        try await claimName()
    }

    func record(_ call: String) { calls.withLock { $0.append(call) } }

    public func claimName() async throws {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(Self.service), .uint32(0)])
        guard reply.first == .uint32(1) else {  // primary owner
            throw StandInError(description: "RequestName(org.bluez) answered \(reply), not primary owner")
        }
    }

    /// Leaves the bus as bluetoothd does when it stops, forgetting what was registered.
    public func releaseName() async throws {
        advertisers.withLock { $0 = [] }
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", arguments: [.string(Self.service)])
    }

    public func setPowered(_ on: Bool) async throws {
        tree.setProperty(path: Self.adapter, interface: Self.adapterInterface, name: "Powered", value: .bool(on))
        try await connection.emitPropertiesChanged(path: Self.adapter, interface: Self.adapterInterface, changed: ["Powered": .bool(on)])
    }

    /// Sets `LEAdvertisingManager1.ActiveInstances` (advertisements other programs registered).
    public func setActiveAdvertisingInstances(_ count: UInt8) {
        tree.setProperty(path: Self.adapter, interface: Self.advertisingManager, name: "ActiveInstances", value: .byte(count))
    }

    /// The controller goes (unplugged, or its driver unloaded): bluetoothd drops the adapter's object.
    public func removeAdapter() {
        tree.removeObject(path: Self.adapter)
    }

    /// A peer's object under the adapter with `Device1.Connected` (as bluetoothd keeps one per device).
    public func setDevice(_ device: String, connected: Bool) async throws {
        if tree.property(path: device, interface: "org.bluez.Device1", name: "Connected") == nil {
            try tree.setObject(path: device, interfaces: ["org.bluez.Device1": ["Adapter": .objectPath(Self.adapter), "Connected": .bool(connected)]])
        } else {
            _ = tree.setProperty(path: device, interface: "org.bluez.Device1", name: "Connected", value: .bool(connected))
        }
        try await connection.emitPropertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(connected)])
    }

    public func disconnected(_ device: String) async throws {
        try await connection.emitPropertiesChanged(path: device, interface: "org.bluez.Device1", changed: ["Connected": .bool(false)])
    }
}
