import DBus

/// The D-Bus objects a `GattApplication` is exported as, the shapes of BlueZ's
/// doc/org.bluez.GattService.rst and GattCharacteristic.rst: service `i` at `root/service<i>` and
/// its characteristic `j` at `root/service<i>/char<j>`, each with the properties bluetoothd reads
/// when the application is registered. A pure function of the application.
struct GattApplicationObjects: Equatable, Sendable {
    /// One object: its path and the properties of its one interface.
    struct Object: Equatable, Sendable {
        var path: String
        var interface: String
        var properties: [String: DBusValue]
    }

    /// A characteristic of the application and the path it is exported at.
    struct Characteristic: Equatable, Sendable {
        var path: String
        var declaration: GattCharacteristic
    }

    let root: String
    /// Every service, each followed by its characteristics, in the order declared.
    let objects: [Object]
    let characteristics: [Characteristic]

    init(_ application: GattApplication, root: String) {
        self.root = root
        var objects: [Object] = []
        var characteristics: [Characteristic] = []
        for (i, service) in application.services.enumerated() {
            let servicePath = root + "/service\(i)"
            let paths = service.characteristics.indices.map { servicePath + "/char\($0)" }
            objects.append(Object(path: servicePath, interface: BlueZ.gattService, properties: [
                "UUID": .string(service.uuid), "Primary": .bool(service.primary), "Characteristics": .objectPaths(paths),
            ]))
            for (path, characteristic) in zip(paths, service.characteristics) {
                var properties: [String: DBusValue] = [
                    "UUID": .string(characteristic.uuid),
                    "Service": .objectPath(servicePath),
                    "Flags": .strings(characteristic.flags.map(\.rawValue)),
                ]
                // Their presence tells bluetoothd that AcquireWrite/AcquireNotify are supported.
                if characteristic.acquiresWrite { properties["WriteAcquired"] = .bool(false) }
                if characteristic.acquiresNotify { properties["NotifyAcquired"] = .bool(false) }
                objects.append(Object(path: path, interface: BlueZ.gattCharacteristic, properties: properties))
                characteristics.append(Characteristic(path: path, declaration: characteristic))
            }
        }
        self.objects = objects
        self.characteristics = characteristics
    }

    /// Where the characteristic `uuid` is exported.
    func path(ofCharacteristic uuid: String) -> String? {
        characteristics.first { $0.declaration.uuid == uuid }?.path
    }
}
