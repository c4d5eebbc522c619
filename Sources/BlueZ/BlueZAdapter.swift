import DBus
import L2CAP

/// Finding and checking the adapter, shared by both roles.
enum BlueZAdapter {
    /// Connects to the system bus (honours `DBUS_SYSTEM_BUS_ADDRESS`).
    static func systemBus() async throws(BlueZError) -> DBusConnection {
        do {
            return try await DBusConnection.connect(.system)
        } catch {
            throw BlueZError.busUnavailable(error)
        }
    }

    /// Throws `bluetoothdNotRunning` when no `org.bluez` owner is on the bus.
    static func requireBluetoothd(_ bus: DBusConnection) async throws(BlueZError) {
        do {
            let r = try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameHasOwner", arguments: [.string(BlueZ.service)], timeout: .seconds(5))
            if r.first?.bool != true { throw BlueZError.bluetoothdNotRunning }
        } catch let e as BlueZError {
            throw e
        } catch let e as DBusError {
            throw BlueZError.from(e)
        } catch {
            throw BlueZError.bluetoothdNotRunning
        }
    }

    /// The object path of the adapter `name` ("hci1"), or of the first adapter; checks it is powered.
    static func resolve(_ bus: DBusConnection, name: String?) async throws(BlueZError) -> String {
        try await requireBluetoothd(bus)
        let objects: DBusManagedObjects
        do {
            objects = try await bus.managedObjects(destination: BlueZ.service, path: "/", timeout: .seconds(10))
        } catch {
            throw BlueZError.from(error)
        }
        let adapters = objects.filter { $0.value[BlueZ.adapter] != nil }.keys.sorted()
        let path: String
        if let name {
            let wanted = name.hasPrefix("/") ? name : "/org/bluez/" + name
            guard adapters.contains(wanted) else { throw BlueZError.noAdapter(name) }
            path = wanted
        } else {
            guard let first = adapters.first else { throw BlueZError.noAdapter(nil) }
            path = first
        }
        if objects[path]?[BlueZ.adapter]?["Powered"]?.bool != true {
            throw BlueZError.adapterPoweredOff(path)
        }
        return path
    }
}

extension BlueZAdapter {
    /// The adapter's own address and type (`Address`, `AddressType`), for binding L2CAP sockets.
    static func address(_ bus: DBusConnection, adapterPath: String) async -> BluetoothAddress? {
        guard let props = try? await bus.allProperties(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter),
              let text = props["Address"]?.string else { return nil }
        return BluetoothAddress(text, bluezType: props["AddressType"]?.string ?? "public")
    }
}

extension DBusConnection {
    /// Asks bluetoothd to end the LE link to `device` without waiting: bluetoothd 5.66 answers
    /// `Disconnect` only after its 2 s disconnect timer, which nothing of ours depends on once a
    /// sender is done (the next connection to the same device waits for the old one to go:
    /// `GattCentral.waitForEarlierDisconnect`).
    func requestDisconnect(_ device: String) {
        try? callWithoutReply(destination: BlueZ.service, path: device, interface: BlueZ.device, member: "Disconnect")
    }

    /// A call to bluetoothd, with errors mapped to `BlueZError`.
    func bluez(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(BlueZError) -> [DBusValue] {
        do {
            return try await call(
                destination: BlueZ.service, path: path, interface: interface, member: member,
                arguments: arguments, timeout: timeout)
        } catch {
            throw BlueZError.from(error)
        }
    }
}
