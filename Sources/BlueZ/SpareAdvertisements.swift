import DBus

/// More advertisement instances beside the receiver's first, so that it stays connectable while
/// senders are connected: a controller stops advertising the instance a central connected through
/// (every LE stack does), and the kernel enables that instance again only when the link ends.
/// Each spare is one more `LEAdvertisement1` object and one more `RegisterAdvertisement`.
///
/// Spares are added, never withdrawn while the receiver runs: the kernel remembers which instance
/// a link came through and enables it again when the link ends, and an instance withdrawn (or
/// registered afresh) under a live link left the receiver advertising nothing at all once that
/// link ended (`GattPeripheral.deviceDisconnected`). Extra instances cost nothing but airtime:
/// the kernel rotates between the ones that advertise.
actor SpareAdvertisements {
    private let bus: DBusConnection
    private let adapterPath: String
    private let make: @Sendable () -> LEAdvertisement
    private var registered: [LEAdvertisementExport] = []
    private var closed = false

    /// `make`: each spare's advertisement (fresh private-discovery data every time).
    init(bus: DBusConnection, adapterPath: String, make: @escaping @Sendable () -> LEAdvertisement) {
        self.bus = bus
        self.adapterPath = adapterPath
        self.make = make
    }

    var count: Int { registered.count }

    /// Registers one more spare at `/org/blesend/advertisement<n>`; nil when it is up, else why
    /// bluetoothd refused it (no instance left on the controller, say) or it could not be exported.
    func add(callers: DBusCallerCheck) async -> BlueZError? {
        guard !closed else { return .linkLost }
        let path = "/org/blesend/advertisement\(registered.count + 1)"
        let export: LEAdvertisementExport
        do {
            export = try LEAdvertisementExport(make(), path: path, bus: bus)
            try await export.export(callers: callers)
        } catch {
            return .dbus(error)
        }
        do {
            _ = try await bus.bluez(adapterPath, BlueZ.advertisingManager, "RegisterAdvertisement",
                                    [.objectPath(path), .properties([:])])
        } catch {
            await export.unexport()
            return error
        }
        registered.append(export)
        return nil
    }

    /// bluetoothd left the bus and forgot them.
    func forget() async {
        for export in registered { await export.unexport() }
        registered.removeAll()
    }

    func close() async {
        closed = true
        for export in registered {
            _ = try? await bus.bluez(adapterPath, BlueZ.advertisingManager, "UnregisterAdvertisement",
                                     [.objectPath(export.path)], timeout: .seconds(5))
            await export.unexport()
        }
        registered.removeAll()
    }
}
