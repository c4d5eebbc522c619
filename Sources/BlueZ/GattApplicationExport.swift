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
    func route<Handler: GattCharacteristicHandler>(characteristic uuid: String, to handler: Handler) throws(DBusError) {
        let path = characteristicPath(uuid)
        func answer(_ member: String, _ body: @escaping @Sendable (Handler, DBusMessage) async throws -> [DBusValue]) throws(DBusError) {
            try tree.setMethod(path: path, interface: BlueZ.gattCharacteristic, member: member) { [weak handler] call in
                guard let handler else { throw DBusErrorReply.failed("gone") }
                return try await body(handler, call)
            }
        }
        try answer("AcquireWrite") { handler, call in try await handler.acquireWrite(GattRequestOptions.acquire(call)).reply }
        try answer("AcquireNotify") { handler, call in try await handler.acquireNotify(GattRequestOptions.acquire(call)).reply }
        try answer("WriteValue") { handler, call in
            let (value, options) = try GattRequestOptions.writeValue(call)
            try await handler.writeValue(value, options: options)
            return []
        }
        try answer("StartNotify") { handler, _ in
            try await handler.startNotify()
            return []
        }
        try answer("StopNotify") { handler, _ in
            await handler.stopNotify()
            return []
        }
        try answer("ReadValue") { handler, _ in [.bytes(try await handler.readValue())] }
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

    /// Answers calls on the root and every object below it, from the callers `callers` admits
    /// (bluetoothd: `org.bluez`'s owner); anyone else on the bus gets AccessDenied. Unix fds in
    /// replies are closed once sent.
    func export(callers: DBusCallerCheck) async throws(DBusError) {
        try await tree.export(on: bus, transfersFDs: true, callers: callers)
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
