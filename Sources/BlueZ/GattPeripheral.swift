import DBus

/// The receiver side: a GATT application with the transfer service, plus an LE advertisement.
/// Each BLE connection from a sender becomes a `GattLink` returned by `accept()`; one link at a time,
/// several senders one after another (the advertisement is re-registered after each disconnect).
///
/// It survives bluetoothd restarting (`NameOwnerChanged` of `org.bluez`: the application and the
/// advertisement are registered again once the adapter is back, or `accept()` fails with
/// `bluetoothdNotRunning` after `recoveryTimeout`) and the adapter being powered off and on
/// (advertises again).
///
/// The parts: what is served, as values (`BlesendGATT.application`, `.advertisement`); their D-Bus
/// objects (`GattApplicationExport`, `LEAdvertisementExport`); the transfer characteristic's calls
/// and the current link (`TransferCharacteristicServer`); the links waiting for `accept()`
/// (`GattAcceptQueue`); what bluetoothd holds for us (`BluezRegistration`); and bluetoothd or the
/// adapter coming and going (`BluetoothdRecovery`).
public actor GattPeripheral {
    /// What happened to bluetoothd or the adapter, for the log.
    public enum Event: Sendable, Equatable {
        /// `org.bluez` left the bus; the current link is gone.
        case bluetoothdGone
        /// `org.bluez` is back and the application and advertisement are registered again.
        case registeredAgain
        /// The adapter was powered off (true: on again, advertising).
        case adapterPowered(Bool)
    }

    /// How long bluetoothd may stay away (or its adapter stay unusable after it came back) before
    /// `accept()` gives up.
    public static let recoveryTimeout: Duration = .seconds(60)

    public nonisolated let adapterPath: String
    private let bus: DBusConnection
    private let ownsBus: Bool
    private let application: GattApplicationExport
    private let advertisement: LEAdvertisementExport
    private let links: GattAcceptQueue
    private let server: TransferCharacteristicServer
    private let registration: BluezRegistration
    private let recovery: BluetoothdRecovery
    private var closed = false

    static let appPath = "/org/blesend/app"
    static let advertisementPath = "/org/blesend/advertisement0"

    /// Registers the GATT application and the advertisement on `adapter` ("hci0"; nil = first adapter).
    /// `localName` is off by default (no stable personal identifier in the advertisement).
    public static func start(
        adapter: String? = nil, localName: String? = nil, versionCharacteristic: Bool = true, bus: DBusConnection? = nil
    ) async throws(BlueZError) -> GattPeripheral {
        let connection: DBusConnection
        if let bus { connection = bus } else { connection = try await BlueZAdapter.systemBus() }
        do {
            let adapterPath = try await BlueZAdapter.resolve(connection, name: adapter)
            let peripheral = try GattPeripheral(
                bus: connection, ownsBus: bus == nil, adapterPath: adapterPath, localName: localName,
                versionCharacteristic: versionCharacteristic)
            try await peripheral.register()
            return peripheral
        } catch {
            if bus == nil { await connection.close() }
            throw error
        }
    }

    private init(
        bus: DBusConnection, ownsBus: Bool, adapterPath: String, localName: String?, versionCharacteristic: Bool
    ) throws(BlueZError) {
        self.bus = bus
        self.ownsBus = ownsBus
        self.adapterPath = adapterPath
        let application: GattApplicationExport
        do {
            application = try GattApplicationExport(
                BlesendGATT.application(versionCharacteristic: versionCharacteristic), root: Self.appPath, bus: bus)
            advertisement = try LEAdvertisementExport(BlesendGATT.advertisement(localName: localName), path: Self.advertisementPath, bus: bus)
        } catch {
            throw BlueZError.dbus(error)
        }
        let links = GattAcceptQueue()
        let server = TransferCharacteristicServer(
            notifier: application.notifier(characteristic: BlesendGATT.transferCharacteristicUUID), links: links)
        let registration = BluezRegistration(
            bus: bus, adapterPath: adapterPath, applicationPath: Self.appPath, advertisementPath: Self.advertisementPath)
        self.application = application
        self.links = links
        self.server = server
        self.registration = registration
        recovery = BluetoothdRecovery(
            bus: bus, adapterPath: adapterPath, registration: registration, server: server, links: links,
            timeout: Self.recoveryTimeout)
    }

    /// Receives `Event`s (called on the peripheral's recovery actor; keep it short).
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        recovery.observe(observer)
    }

    private func register() async throws(BlueZError) {
        do {
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: server)
            try await application.export()
            try await advertisement.export()
        } catch {
            throw BlueZError.dbus(error)
        }
        await server.onLinkEnded { [weak self] in await self?.linkEnded() }
        // Watch for disconnects of the current peer, the adapter's power, and bluetoothd itself.
        try await server.watchDisconnects(bus: bus, adapterPath: adapterPath)
        try await recovery.start()
        try await registration.registerMissing()
    }

    /// A link ended: advertise again for the next sender.
    private func linkEnded() async {
        guard !closed else { return }
        await registration.advertiseAgain()
    }

    /// The next sender's link. Throws `linkLost` once the peripheral is closed, and
    /// `bluetoothdNotRunning` (or what re-registering failed with) when bluetoothd went away and
    /// did not come back within `recoveryTimeout`.
    public func accept() async throws(BlueZError) -> GattLink {
        try await links.accept()
    }

    /// Registers the GATT application with bluetoothd afresh (`BluezRegistration.registerApplicationAgain`):
    /// bluetoothd 5.66 can stop handing a characteristic's writes over for good.
    public func registerApplicationAgain() async throws(BlueZError) {
        guard !closed else { return }
        try await registration.registerApplicationAgain()
    }

    /// Ends the BLE connection of `link`'s peer: a sender that failed the handshake, went silent
    /// or broke the protocol would otherwise keep holding the link (the receiver only closed its
    /// sockets). Nothing is done if that peer has already opened a newer link.
    public func disconnectPeer(of link: GattLink) async {
        guard let device = link.device, !closed else { return }
        if await server.hasNewerLink(than: link) { return }
        _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(5))
    }

    /// Unregisters the advertisement and the application, closes the current link.
    public func close() async {
        guard !closed else { return }
        closed = true
        await recovery.stop()
        await server.close()
        await registration.close()
        await application.unexport()
        await advertisement.unexport()
        links.close()
        if ownsBus { await bus.close() }
    }
}
