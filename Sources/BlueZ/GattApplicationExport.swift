import DBus

/// Serves a `GattApplication` on a bus: its objects and their properties (`GattApplicationObjects`)
/// with the standard interfaces bluetoothd asks them through (ObjectManager on the root,
/// Properties), the reads of constant characteristics, and the calls on a handled characteristic,
/// decoded and passed to its `GattCharacteristicHandler`.
final class GattApplicationExport: Sendable {
    let objects: GattApplicationObjects
    private let tree: DBusObjectTree
    private let bus: DBusConnection

    init(_ application: GattApplication, root: String, bus: DBusConnection) throws(DBusError) {
        objects = GattApplicationObjects(application, root: root)
        tree = try DBusObjectTree(root: root)
        self.bus = bus
        for object in objects.objects {
            try tree.setObject(path: object.path, interfaces: [object.interface: object.properties])
        }
        for characteristic in objects.characteristics {
            guard case .constant(let value) = characteristic.declaration.value else { continue }
            try tree.setMethod(path: characteristic.path, interface: BlueZ.gattCharacteristic, member: "ReadValue") { _ in
                [.bytes(value)]
            }
        }
    }

    /// Sends BlueZ's calls on the characteristic `uuid` to `handler`, which is held weakly: once it
    /// is gone, they fail.
    func route(characteristic uuid: String, to handler: some GattCharacteristicHandler) throws(DBusError) {
        let path = characteristicPath(uuid)
        let iface = BlueZ.gattCharacteristic
        try tree.setMethod(path: path, interface: iface, member: "AcquireWrite") { [weak handler] call in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            return try await handler.acquireWrite(GattRequestOptions.acquire(call)).reply
        }
        try tree.setMethod(path: path, interface: iface, member: "AcquireNotify") { [weak handler] call in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            return try await handler.acquireNotify(GattRequestOptions.acquire(call)).reply
        }
        try tree.setMethod(path: path, interface: iface, member: "WriteValue") { [weak handler] call in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            let (value, options) = try GattRequestOptions.writeValue(call)
            try await handler.writeValue(value, options: options)
            return []
        }
        try tree.setMethod(path: path, interface: iface, member: "StartNotify") { [weak handler] _ in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            try await handler.startNotify()
            return []
        }
        try tree.setMethod(path: path, interface: iface, member: "StopNotify") { [weak handler] _ in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            await handler.stopNotify()
            return []
        }
        try tree.setMethod(path: path, interface: iface, member: "ReadValue") { [weak handler] _ in
            guard let handler else { throw DBusErrorReply.failed("gone") }
            return [.bytes(try await handler.readValue())]
        }
    }

    /// How the handler of the characteristic `uuid` notifies: `PropertiesChanged` signals of its
    /// `Value` from its object, and its `Notifying` property.
    func notifier(characteristic uuid: String) -> GattNotifier {
        let path = characteristicPath(uuid)
        let (bus, tree) = (bus, tree)
        return GattNotifier(
            notify: { value in
                try await bus.emitPropertiesChanged(path: path, interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(value)])
            },
            setNotifying: { on in
                tree.setProperty(path: path, interface: BlueZ.gattCharacteristic, name: "Notifying", value: .bool(on))
            })
    }

    /// Answers calls on the root and every object below it. Unix fds in replies are closed once sent.
    func export() async throws(DBusError) {
        try await tree.export(on: bus, transfersFDs: true)
    }

    func unexport() async {
        await bus.unexport(path: objects.root)
    }

    private func characteristicPath(_ uuid: String) -> String {
        guard let path = objects.path(ofCharacteristic: uuid) else { preconditionFailure("no characteristic \(uuid) in the application") }
        return path
    }
}

extension AcquiredSocket {
    /// `(h fd, q mtu)`.
    var reply: [DBusValue] { [.unixFD(fd), .uint16(mtu)] }
}
