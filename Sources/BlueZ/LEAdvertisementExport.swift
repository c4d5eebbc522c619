import DBus

/// Serves an `LEAdvertisement` on a bus at `path`: org.bluez.LEAdvertisement1's properties and its
/// `Release` method.
final class LEAdvertisementExport: Sendable {
    let path: String
    private let tree: DBusObjectTree
    private let bus: DBusConnection

    init(_ advertisement: LEAdvertisement, path: String, bus: DBusConnection) throws(DBusError) {
        self.path = path
        self.bus = bus
        tree = try DBusObjectTree(root: path)
        try tree.setObject(path: path, interfaces: [BlueZ.advertisement: advertisement.properties])
        try tree.setMethod(path: path, interface: BlueZ.advertisement, member: "Release") { _ in [] }
    }

    /// Serves `advertisement` from now on (bluetoothd reads it at the next `RegisterAdvertisement`).
    func update(_ advertisement: LEAdvertisement) {
        for (name, value) in advertisement.properties {
            _ = tree.setProperty(path: path, interface: BlueZ.advertisement, name: name, value: value)
        }
    }

    /// Answers the callers `callers` admits (bluetoothd: `org.bluez`'s owner); anyone else gets AccessDenied.
    func export(callers: DBusCallerCheck) async throws(DBusError) {
        try await tree.export(on: bus, callers: callers)
    }

    func unexport() async {
        await bus.unexport(path: path)
    }
}

extension LEAdvertisement {
    /// org.bluez.LEAdvertisement1's properties; what is not set is left out.
    var properties: [String: DBusValue] {
        var properties: [String: DBusValue] = ["Type": .string(kind.rawValue)]
        if !serviceUUIDs.isEmpty { properties["ServiceUUIDs"] = .strings(serviceUUIDs) }
        if let discoverable { properties["Discoverable"] = .bool(discoverable) }
        if let localName { properties["LocalName"] = .string(localName) }
        if !serviceData.isEmpty { properties["ServiceData"] = .properties(serviceData.mapValues { .bytes($0) }) }
        return properties
    }
}
