import DBus

extension FakeBluetoothd {
    /// Serves the adapter's discovery as bluetoothd does for a scan: `SetDiscoveryFilter` (recorded
    /// as "SetDiscoveryFilter" and the filter's keys, sorted: "SetDiscoveryFilter Transport"),
    /// `StartDiscovery`, `StopDiscovery`, and `RemoveDevice` (the object goes). At every
    /// `StartDiscovery` each device of `nearby` (path -> `Device1` properties) is reported: a new
    /// object (`InterfacesAdded`) the first time, its properties again (`PropertiesChanged`) after.
    public func serveDiscovery(nearby: [String: [String: DBusValue]]) throws {
        try tree.setMethod(path: Self.adapter, interface: Self.adapterInterface, member: "SetDiscoveryFilter") { [self] call in
            let keys = (try call.argument(0).properties ?? [:]).keys.sorted()
            record((["SetDiscoveryFilter"] + keys).joined(separator: " "))
            return []
        }
        try tree.setMethod(path: Self.adapter, interface: Self.adapterInterface, member: "StartDiscovery") { [self] _ in
            record("StartDiscovery")
            for (device, props) in nearby.sorted(by: { $0.key < $1.key }) { try await report(device, props) }
            return []
        }
        try tree.setMethod(path: Self.adapter, interface: Self.adapterInterface, member: "StopDiscovery") { [self] _ in
            record("StopDiscovery")
            return []
        }
        try tree.setMethod(path: Self.adapter, interface: Self.adapterInterface, member: "RemoveDevice") { [self] call in
            guard let device = try call.argument(0).objectPath else { throw DBusErrorReply.invalidArgs("o") }
            record("RemoveDevice " + device)
            tree.removeObject(path: device)
            return []
        }
    }

    /// A device object as bluetoothd keeps it from an earlier scan or connection (no signal).
    public func setCachedDevice(_ device: String, _ props: [String: DBusValue]) throws {
        try tree.setObject(path: device, interfaces: [Self.deviceInterface: props])
    }

    static let deviceInterface = "org.bluez.Device1"

    private func report(_ device: String, _ props: [String: DBusValue]) async throws {
        if tree.property(path: device, interface: Self.deviceInterface, name: "Adapter") == nil {
            try tree.setObject(path: device, interfaces: [Self.deviceInterface: props])
            try await connection.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                arguments: [.objectPath(device), .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                    DBusDictEntry(key: .string(Self.deviceInterface), value: .properties(props)),
                ])])
        } else {
            try await connection.emitPropertiesChanged(path: device, interface: Self.deviceInterface, changed: props)
        }
    }
}
