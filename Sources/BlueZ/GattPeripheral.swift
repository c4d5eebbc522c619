import DBus
import L2CAP
import Pipeline
import Synchronization

/// The receiver side: a GATT application with the transfer service, plus an LE advertisement, plus
/// an L2CAP channel listener whose PSM the service publishes (where the kernel has LE L2CAP
/// sockets). Each sender's connection, a `GattLink` or an `L2CAPChannel`, is a `PeerConnection`
/// returned by `accept()`; one at a time, several senders one after another (the kernel advertises
/// again when each sender's LE link is down: `deviceDisconnected`).
///
/// It survives bluetoothd restarting (`NameOwnerChanged` of `org.bluez`: the application and the
/// advertisement are registered again once the adapter is back, or `accept()` fails with
/// `bluetoothdNotRunning` after `recoveryTimeout`) and the adapter being powered off and on
/// (advertises again).
///
/// The parts: what is served, as values (`BlesendGATT.application`, `.advertisement`); their D-Bus
/// objects (`GattApplicationExport`, `LEAdvertisementExport`); the transfer characteristic's calls
/// and the current link (`TransferCharacteristicServer`); the links waiting for `accept()`
/// (`AcceptQueue`); the L2CAP channels (`L2CAPListener`); what bluetoothd holds for us (`BluezRegistration`); and bluetoothd or the
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
        /// bluetoothd refused another advertisement instance (with its error): with this many
        /// links up (or more) no new sender can connect until one ends.
        case advertisingInstancesExhausted(Int, BlueZError)
    }

    /// How long bluetoothd may stay away (or its adapter stay unusable after it came back) before
    /// `accept()` gives up.
    public static let recoveryTimeout: Duration = .seconds(60)

    public nonisolated let adapterPath: String
    private let bus: DBusConnection
    private let ownsBus: Bool
    private let application: GattApplicationExport
    private let advertisement: LEAdvertisementExport
    private let links: AcceptQueue<PeerConnection>
    /// The transports offered besides GATT, as `TransportChoice.table` starts them (the L2CAP
    /// listener), and their connections.
    private let offered: OfferedTransports
    /// With private discovery: a new salt every `discoveryRotation` (`AdvertisementRotation`).
    private var rotation: Task<Void, Never>?
    private let discoveryRotation: Duration?
    /// When the advertisement was last registered, by whoever did it (the rotation, or
    /// `BluetoothdRecovery` after bluetoothd or the adapter came back).
    private let advertised = RegistrationStamp()
    private let clockOrigin = ContinuousClock.now
    /// The PSM senders open channels on; nil when this receiver serves GATT only.
    public nonisolated var l2capPSM: UInt16? { offered.psm }
    /// Why no L2CAP channel is offered, when it was asked for and could not be set up.
    public nonisolated var l2capUnavailable: L2CAPError? { offered.unavailable }
    private let server: TransferCharacteristicServer
    private let registration: BluezRegistration
    private let recovery: BluetoothdRecovery
    /// Only bluetoothd (`org.bluez`'s owner, followed across restarts) may call what we export.
    private let callers: DBusCallerCheck
    private var closed = false
    private var renewal = ApplicationRenewalPolicy()
    /// Advertisement instances beside the first, one per link up (`observeLinks`).
    private let spares: SpareAdvertisements
    /// The devices whose LE links are up.
    private var linked: Set<String> = []
    /// bluetoothd refused a spare instance once (said once in the log).
    private var sparesRefused = false
    private var observer: (@Sendable (Event) -> Void)?

    static let appPath = "/org/blesend/app"
    static let advertisementPath = "/org/blesend/advertisement0"

    /// The largest SDU a receiver takes on its L2CAP channel (docs/protocol.md §1.2).
    public static let l2capReceiveMTU = 4096

    /// Registers the GATT application and the advertisement on `adapter` ("hci0"; nil = first adapter).
    /// `localName` is off by default (no stable personal identifier in the advertisement). With
    /// `l2cap`, also listens for L2CAP channels and publishes the PSM; if the kernel or adapter
    /// cannot, serves GATT only and says why in `l2capUnavailable`. `extensions` (a bit set, 0 for
    /// none) is published in the extensions characteristic (docs/protocol.md §8). `discovery`, if
    /// given, makes the private-discovery service data afresh for every registration of the
    /// advertisement (a new salt each time; docs/protocol.md §1.1), and the advertisement is
    /// registered afresh every `discoveryRotation` while none of our senders is connected (under
    /// the kernel's 15-minute address rotation: a new instance gets a new private address;
    /// `AdvertisementRotation`, whose limits a longer period falls back from).
    public static func start(
        adapter: String? = nil, localName: String? = nil, versionCharacteristic: Bool = true, l2cap: Bool = true,
        extensions: UInt32 = 0, discovery: (@Sendable () -> [UInt8])? = nil, discoveryRotation: Duration = .seconds(600),
        bus: DBusConnection? = nil
    ) async throws(BlueZError) -> GattPeripheral {
        let connection: DBusConnection
        if let bus { connection = bus } else { connection = try await BlueZAdapter.systemBus() }
        do {
            let adapterPath = try await BlueZAdapter.resolve(connection, name: adapter)
            let offers = await (l2cap ? TransportChoice.auto : .gatt).offers(at: PeripheralSite(bus: connection, adapterPath: adapterPath))
            let peripheral = try GattPeripheral(
                bus: connection, ownsBus: bus == nil, adapterPath: adapterPath, localName: localName,
                versionCharacteristic: versionCharacteristic, extensions: extensions, discovery: discovery,
                discoveryRotation: discovery == nil ? nil : discoveryRotation, offers: offers)
            try await peripheral.register()
            return peripheral
        } catch {
            if bus == nil { await connection.close() }
            throw error
        }
    }

    private init(
        bus: DBusConnection, ownsBus: Bool, adapterPath: String, localName: String?, versionCharacteristic: Bool,
        extensions: UInt32, discovery: (@Sendable () -> [UInt8])?, discoveryRotation: Duration?, offers: [PeripheralOffer]
    ) throws(BlueZError) {
        self.bus = bus
        self.ownsBus = ownsBus
        self.adapterPath = adapterPath
        let offered = OfferedTransports(offers)
        self.offered = offered
        let psm = offered.psm
        self.discoveryRotation = discoveryRotation
        let application: GattApplicationExport
        do {
            application = try GattApplicationExport(
                BlesendGATT.application(versionCharacteristic: versionCharacteristic, psm: psm, extensions: extensions), root: Self.appPath, bus: bus)
            advertisement = try LEAdvertisementExport(
                BlesendGATT.advertisement(localName: localName, discovery: discovery?()), path: Self.advertisementPath, bus: bus)
            callers = try DBusCallerCheck(owner: BlueZ.service)
        } catch {
            offered.close()
            throw BlueZError.dbus(error)
        }
        let links = AcceptQueue<PeerConnection>()
        let server = TransferCharacteristicServer(
            notifier: application.notifier(characteristic: BlesendGATT.transferCharacteristicUUID), links: links)
        var refresh: (@Sendable () -> Void)?
        if let discovery {
            refresh = { [advertisement, advertised] in
                advertisement.update(BlesendGATT.advertisement(localName: localName, discovery: discovery()))
                advertised.stamp()
            }
        }
        let registration = BluezRegistration(
            bus: bus, adapterPath: adapterPath, applicationPath: Self.appPath, advertisementPath: Self.advertisementPath,
            beforeAdvertising: refresh)
        self.application = application
        self.links = links
        self.server = server
        self.registration = registration
        spares = SpareAdvertisements(bus: bus, adapterPath: adapterPath) {
            BlesendGATT.advertisement(localName: localName, discovery: discovery?())
        }
        recovery = BluetoothdRecovery(
            bus: bus, adapterPath: adapterPath, registration: registration, server: server, links: links,
            timeout: Self.recoveryTimeout)
    }

    /// Receives `Event`s (called on the peripheral's recovery actor; keep it short).
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        self.observer = observer
        recovery.observe { [spares] event in
            // bluetoothd forgot every instance it held for us: spares are added again as links come.
            if event == .bluetoothdGone { Task { await spares.forget() } }
            observer(event)
        }
    }

    private func register() async throws(BlueZError) {
        do {
            try application.route(characteristic: BlesendGATT.transferCharacteristicUUID, to: server)
            try await callers.start(on: bus)
            try await application.export(callers: callers)
            try await advertisement.export(callers: callers)
        } catch {
            throw BlueZError.dbus(error)
        }
        await server.onDeviceDisconnected { [weak self] device in await self?.deviceDisconnected(device) }
        // Watch for disconnects of the current peer, the adapter's power, and bluetoothd itself.
        try await server.watchDisconnects(bus: bus, adapterPath: adapterPath)
        try await recovery.start()
        try await registration.registerMissing()
        offered.start(into: links)
        if let discoveryRotation {
            let policy = AdvertisementRotation(registeredAt: now, period: discoveryRotation)
                ?? AdvertisementRotation(registeredAt: now)
            if let policy { rotation = Task { [weak self] in await self?.rotate(policy) } }
        }
    }

    /// The peripheral's own monotonic time, as the policies take it.
    private var now: Instant { instant(ContinuousClock.now) }

    private func instant(_ time: ContinuousClock.Instant) -> Instant {
        Instant(nanoseconds: UInt64(max(0, (time - clockOrigin).nanoseconds)))
    }

    /// Registers the advertisement afresh (new private-discovery data) when `AdvertisementRotation`
    /// says so: every period, but not while one of our senders is connected: re-registering under
    /// a live link would leave the kernel re-enabling a stale instance when it ends
    /// (`deviceDisconnected`). A sender that connects in the few milliseconds of the swap meets
    /// the same; that is once in a rotation at most, against once in 50–90 sends when blerecv
    /// re-registered after every link.
    private func rotate(_ start: AdvertisementRotation) async {
        var policy = start
        while !Task.isCancelled, !closed {
            if let stamp = advertised.latest, instant(stamp) > policy.lastRegistration { policy.registered(at: instant(stamp)) }
            switch policy.decide(now: now, connected: await connectedDevices()) {
            case .wait(let until):
                try? await Task.sleep(for: until.duration(since: now))
            case .registerAgain:
                await advertiseAgain()
                policy.registered(at: now)
            }
        }
    }

    /// The devices connected on this adapter, each marked when it holds a link on our service
    /// (nil when bluetoothd does not answer).
    private func connectedDevices() async -> [AdvertisementRotation.ConnectedDevice]? {
        guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/") else { return nil }
        var ours = offered.devices
        if let device = await server.currentDevice() { ours.insert(device) }
        return AdvertisementRotation.connectedDevices(objects, adapterPath: adapterPath, ours: ours)
    }

    /// bluetoothd says `device` disconnected: its channel, if any, is over.
    ///
    /// The advertisement is left as it is. The kernel remembers which advertising instance a
    /// peripheral connection came from and enables that instance again when the connection drops,
    /// so the receiver advertises for the next sender without a word from us. Registering it
    /// afresh here (as blerecv once did) races that: a sender connecting within a few tens of
    /// milliseconds of the previous link's end connects to the instance being replaced, and when
    /// that link ends the kernel enables an instance that no longer exists (non-connectable, from a
    /// random address) and then none. The receiver stopped advertising for good; the next
    /// sender's `Connect` timed out (seen on 5.82 / 6.12 about once in 50–90 back-to-back sends).
    private func deviceDisconnected(_ device: String) async {
        if let connection = offered.disconnected(device) { await connection.close() }
    }

    private func advertiseAgain() async {
        guard !closed else { return }
        await registration.advertiseAgain()
    }

    /// The next sender's link. Throws `linkLost` once the peripheral is closed, and
    /// `bluetoothdNotRunning` (or what re-registering failed with) when bluetoothd went away and
    /// did not come back within `recoveryTimeout`.
    public func accept() async throws(BlueZError) -> PeerConnection {
        try await links.accept()
    }

    /// Tells `observer` of every LE link on the adapter coming up (true) or going down (false), by
    /// device path (called on the peripheral's tasks; keep it short), and keeps the receiver
    /// connectable beside them: one advertisement instance more than links up, up to `spares`
    /// more than the first (`SpareAdvertisements`; blerecv: `--max-links`, so with every slot taken
    /// one more sender can still connect, to be told when to come back, `busy`, docs/protocol.md
    /// §8.6; 0 for a controller that cannot hold two links). The next instance is registered before
    /// the link that needs it: registered only once a link was up, a second sender starting at the
    /// same time sometimes found nothing until the first had left (senders.sh, 1 run in 4).
    public func observeLinks(spares: Int, _ observer: @escaping @Sendable (String, Bool) -> Void) async {
        await server.observeLinks { [weak self] device, up in
            observer(device, up)
            Task { await self?.linkChanged(device, up: up, spares: spares) }
        }
        await addSpares(upTo: min(1, spares))
    }

    private func linkChanged(_ device: String, up: Bool, spares maxSpares: Int) async {
        guard up else {
            linked.remove(device)
            return
        }
        linked.insert(device)
        await addSpares(upTo: min(linked.count + 1, maxSpares))
    }

    private func addSpares(upTo wanted: Int) async {
        while !closed, await spares.count < wanted {
            if let refusal = await spares.add(callers: callers) {
                if !sparesRefused { observer?(.advertisingInstancesExhausted(await spares.count + 1, refusal)) }
                sparesRefused = true
                return
            }
        }
    }

    /// What became of `endBareLink`.
    public enum BareLinkEnding: Sendable, Equatable {
        /// bluetoothd ended it, or it was gone already (not connected, no such device).
        case ended
        /// Not the receiver's business (`LinkStanding`): left up.
        case spared(LinkStanding.Reason)
        /// bluetoothd did not end it (a timeout, a refusal): the caller tries again rather than
        /// forget a link that stays up.
        case failed(BlueZError)
    }

    /// Asks bluetoothd to end `device`'s link, one that opened no transfer channel in time, unless
    /// it is not the receiver's to end (`LinkStanding`: a BR/EDR link, this adapter's outgoing one,
    /// a paired device's).
    public func endBareLink(device: String) async -> BareLinkEnding {
        guard !closed else { return .ended }
        if case .spared(let reason) = await standing(of: device) { return .spared(reason) }
        do {
            _ = try await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(5))
            return .ended
        } catch {
            return Self.linkGone(after: error) ? .ended : .failed(error)
        }
    }

    /// `device`'s link as `LinkStanding` sees it: bluetoothd's `Address`, `Paired` and `Bonded`
    /// (5.66 has no `Bonded`), and the kernel's links of this adapter to that address. What cannot
    /// be read counts as unknown, which spares nothing.
    func standing(of device: String) async -> LinkStanding {
        let properties = try? await bus.allProperties(destination: BlueZ.service, path: device, interface: BlueZ.device)
        let paired = properties?["Paired"]?.bool == true || properties?["Bonded"]?.bool == true
        var kernel: [AdapterLink] = []
        if let address = properties?["Address"]?.string.flatMap({ BluetoothAddress($0, kind: .public) }),
           let index = ManagementSocket.index(of: AdapterStatus.name(of: adapterPath)),
           let links = try? AdapterLinks.read(index: index) {
            kernel = links.filter { $0.address == address.bytes }
        }
        return LinkStanding(kernel: kernel, paired: paired)
    }

    /// Whether a failed `Device1.Disconnect` still means the link is over.
    static func linkGone(after error: BlueZError) -> Bool {
        switch error {
        case .linkLost: true
        case .bluez(let reply), .dbus(.remote(let reply)): ConnectAttemptFailure.vanishedDeviceErrors.contains(reply.name)
        default: false
        }
    }

    /// Registers the GATT application with bluetoothd afresh (`BluezRegistration.registerApplicationAgain`):
    /// bluetoothd 5.66 can stop handing a characteristic's writes over for good. Only once the
    /// link of `connection`'s peer is gone (waited for up to `peerLinkPatience`; the peer was asked
    /// to disconnect) and not more often than `ApplicationRenewalPolicy` allows; says what it did.
    public func registerApplicationAgain(
        after connection: PeerConnection, patience: Duration = peerLinkPatience
    ) async throws(BlueZError) -> ApplicationRenewalPolicy.Decision {
        let connected = await peerStillConnected(connection.device, patience: patience)
        guard !closed else { return .skipLinkUp }
        let decision = renewal.decide(peerConnected: connected, now: now)
        if decision == .renew { try await registration.registerApplicationAgain() }
        return decision
    }

    /// How long `registerApplicationAgain` waits for the peer's link to end (bluetoothd ends a link
    /// about 2 s after `Disconnect`).
    public static let peerLinkPatience: Duration = .seconds(6)

    /// Whether `device` still has a link after up to `patience` (true when it cannot tell).
    private func peerStillConnected(_ device: String?, patience: Duration) async -> Bool {
        guard let device else { return true }
        let linkEnded = await boundedPoll(patience: patience, every: .milliseconds(100)) { () async -> Bool? in
            if let connected = try? await bus.property(destination: BlueZ.service, path: device, interface: BlueZ.device, name: "Connected") {
                return connected.bool != true ? true : nil
            }
            return await deviceExists(device) ? nil : true   // no such object any more: no link either
        }
        return linkEnded == nil
    }

    private func deviceExists(_ device: String) async -> Bool {
        guard let objects = try? await bus.managedObjects(destination: BlueZ.service, path: "/") else { return true }
        return objects[device]?[BlueZ.device] != nil
    }

    /// Ends the BLE connection of `connection`'s peer: a sender that failed the handshake, went
    /// silent or broke the protocol would otherwise keep holding the link (the receiver only closed
    /// its sockets). Nothing is done if that peer has already opened a newer connection.
    public func disconnectPeer(of connection: PeerConnection) async {
        guard let device = connection.device, !closed else { return }
        if let link = connection.gattLink {
            if await server.hasNewerLink(than: link) { return }
        } else if !offered.isNewest(connection, of: device) {
            return
        }
        _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(5))
    }

    /// Unregisters the advertisement and the application, closes the current link.
    public func close() async {
        guard !closed else { return }
        closed = true
        offered.close()
        rotation?.cancel()
        await spares.close()
        await recovery.stop()
        await server.close()
        await registration.close()
        await application.unexport()
        await advertisement.unexport()
        callers.stop()
        links.close()
        if ownsBus { await bus.close() }
    }
}

/// When the advertisement was last handed to bluetoothd, written from `BluezRegistration`'s
/// `beforeAdvertising` and read by the rotation.
final class RegistrationStamp: Sendable {
    private let time = Mutex<ContinuousClock.Instant?>(nil)

    func stamp() { time.withLock { $0 = ContinuousClock.now } }
    var latest: ContinuousClock.Instant? { time.withLock { $0 } }
}
