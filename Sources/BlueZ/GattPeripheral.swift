import DBus
import Glibc
import Pipeline

/// The receiver side: a GATT application with the transfer service, plus an LE advertisement.
/// Each BLE connection from a sender becomes a `GattLink` returned by `accept()`; one link at a time,
/// several senders one after another (the advertisement is re-registered after each disconnect).
///
/// It survives bluetoothd restarting (`NameOwnerChanged` of `org.bluez`: the application and the
/// advertisement are registered again once the adapter is back, or `accept()` fails with
/// `bluetoothdNotRunning` after `recoveryTimeout`) and the adapter being powered off and on
/// (advertises again).
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
    private let app: DBusObjectTree
    private let advertisement: DBusObjectTree
    private var pendingLinks: [GattLink] = []
    private var acceptWaiters: [CheckedContinuation<GattLink?, Never>] = []
    private var current: GattLink?
    private var advertising = false
    private var registered = false
    private var closed = false
    private var watchers: [Task<Void, Never>] = []
    private var observer: (@Sendable (Event) -> Void)?
    /// Set when bluetoothd went away and did not come back in time; `accept()` throws it.
    private var failure: BlueZError?
    /// Counts bluetoothd's departures, so a stale recovery deadline does nothing.
    private var bluezEpoch = 0
    private let localName: String?

    static let appPath = "/org/blesend/app"
    static let servicePath = appPath + "/service0"
    static let transferPath = servicePath + "/char0"
    static let versionPath = servicePath + "/char1"
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
        self.localName = localName
        do {
            app = try DBusObjectTree(root: Self.appPath)
            advertisement = try DBusObjectTree(root: Self.advertisementPath)
            var chars: [String] = [Self.transferPath]
            if versionCharacteristic { chars.append(Self.versionPath) }
            try app.setObject(path: Self.servicePath, interfaces: [BlueZ.gattService: [
                "UUID": .string(BlesendGATT.serviceUUID), "Primary": .bool(true), "Characteristics": .objectPaths(chars),
            ]])
            try app.setObject(path: Self.transferPath, interfaces: [BlueZ.gattCharacteristic: [
                "UUID": .string(BlesendGATT.transferCharacteristicUUID),
                "Service": .objectPath(Self.servicePath),
                "Flags": .strings(["write-without-response", "notify"]),
                // Their presence tells bluetoothd that AcquireWrite/AcquireNotify are supported.
                "WriteAcquired": .bool(false),
                "NotifyAcquired": .bool(false),
            ]])
            if versionCharacteristic {
                try app.setObject(path: Self.versionPath, interfaces: [BlueZ.gattCharacteristic: [
                    "UUID": .string(BlesendGATT.versionCharacteristicUUID),
                    "Service": .objectPath(Self.servicePath),
                    "Flags": .strings(["read"]),
                ]])
                try app.setMethod(path: Self.versionPath, interface: BlueZ.gattCharacteristic, member: "ReadValue") { _ in
                    [.bytes([BlesendGATT.protocolVersion])]
                }
            }
            var adv: [String: DBusValue] = [
                "Type": .string("peripheral"),
                "ServiceUUIDs": .strings([BlesendGATT.serviceUUID]),
                "Discoverable": .bool(true),
            ]
            if let localName { adv["LocalName"] = .string(localName) }
            try advertisement.setObject(path: Self.advertisementPath, interfaces: [BlueZ.advertisement: adv])
            try advertisement.setMethod(path: Self.advertisementPath, interface: BlueZ.advertisement, member: "Release") { _ in [] }
        } catch {
            throw BlueZError.dbus(error)
        }
    }

    private func installMethods() throws(DBusError) {
        let path = Self.transferPath
        let iface = BlueZ.gattCharacteristic
        try app.setMethod(path: path, interface: iface, member: "AcquireWrite") { [weak self] call in
            guard let self else { throw DBusErrorReply.failed("gone") }
            return try await self.acquire(call, write: true)
        }
        try app.setMethod(path: path, interface: iface, member: "AcquireNotify") { [weak self] call in
            guard let self else { throw DBusErrorReply.failed("gone") }
            return try await self.acquire(call, write: false)
        }
        try app.setMethod(path: path, interface: iface, member: "WriteValue") { [weak self] call in
            guard let self else { throw DBusErrorReply.failed("gone") }
            let (value, options) = try GattRequestOptions.writeValue(call)
            let link = try await self.link(device: options.device, mtu: options.mtu)
            link.deliver(value)
            return []
        }
        try app.setMethod(path: path, interface: iface, member: "StartNotify") { [weak self] _ in
            guard let self else { throw DBusErrorReply.failed("gone") }
            try await self.startNotify()
            return []
        }
        try app.setMethod(path: path, interface: iface, member: "StopNotify") { [weak self] _ in
            guard let self else { throw DBusErrorReply.failed("gone") }
            await self.stopNotify()
            return []
        }
        try app.setMethod(path: path, interface: iface, member: "ReadValue") { _ in [.bytes([])] }
    }

    /// Receives `Event`s (called on the peripheral's executor; keep it short).
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        self.observer = observer
    }

    private func register() async throws(BlueZError) {
        do {
            try installMethods()
            try await app.export(on: bus, transfersFDs: true)
            try await advertisement.export(on: bus)
        } catch {
            throw BlueZError.dbus(error)
        }
        // Watch for disconnects of the current peer, the adapter's power, and bluetoothd itself.
        // (A match rule with sender org.bluez follows the name to a restarted bluetoothd.)
        let changes: AsyncStream<DBusPropertiesChanged>
        let power: AsyncStream<DBusPropertiesChanged>
        let owners: AsyncStream<DBusMessage>
        do {
            changes = try await bus.propertiesChanged(sender: BlueZ.service, pathNamespace: adapterPath, interface: BlueZ.device)
            power = try await bus.propertiesChanged(sender: BlueZ.service, path: adapterPath, interface: BlueZ.adapter)
            owners = try await bus.signals(matching: DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZ.service))
        } catch {
            throw BlueZError.from(error)
        }
        watchers.append(Task { [weak self] in
            for await change in changes {
                guard change.changed["Connected"]?.bool == false else { continue }
                await self?.deviceDisconnected(change.path)
            }
        })
        watchers.append(Task { [weak self] in
            for await change in power {
                guard let powered = change.changed["Powered"]?.bool else { continue }
                await self?.adapterPowered(powered)
            }
        })
        watchers.append(Task { [weak self] in
            for await signal in owners {
                // NameOwnerChanged(name, old_owner, new_owner): an empty new owner means it left.
                guard signal.arguments.count == 3, let newOwner = signal.arguments[2].string else { continue }
                if newOwner.isEmpty { await self?.bluezGone() } else { await self?.bluezBack() }
            }
        })
        try await registerWithBluez()
    }

    /// Registers whatever bluetoothd does not have yet: the application, then the advertisement.
    private func registerWithBluez() async throws(BlueZError) {
        if !registered {
            _ = try await bus.bluez(adapterPath, BlueZ.gattManager, "RegisterApplication", [.objectPath(Self.appPath), .properties([:])])
            registered = true
        }
        try await advertise()
    }

    // MARK: bluetoothd and the adapter coming and going

    private func bluezGone() async {
        guard !closed else { return }
        bluezEpoch += 1
        let epoch = bluezEpoch
        // Everything bluetoothd held for us is gone with it.
        registered = false
        advertising = false
        observer?(.bluetoothdGone)
        if let current { await current.close() }
        Task { [weak self] in
            try? await Task.sleep(for: Self.recoveryTimeout)
            await self?.giveUpUnlessBack(epoch)
        }
    }

    private func bluezBack() async {
        guard !closed else { return }
        registered = false
        advertising = false
        let epoch = bluezEpoch
        // bluetoothd claims its name before it has added the adapters: retry until it takes us.
        let deadline = ContinuousClock.now + Self.recoveryTimeout
        while !closed, epoch == bluezEpoch {
            do {
                try await registerWithBluez()
                observer?(.registeredAgain)
                return
            } catch {
                if ContinuousClock.now > deadline {
                    fail(error)
                    return
                }
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    private func giveUpUnlessBack(_ epoch: Int) {
        guard epoch == bluezEpoch, !registered, !closed else { return }
        fail(.bluetoothdNotRunning)
    }

    /// bluetoothd did not come back: `accept()` throws `error` from now on.
    private func fail(_ error: BlueZError) {
        guard failure == nil else { return }
        failure = error
        for w in acceptWaiters { w.resume(returning: nil) }
        acceptWaiters.removeAll()
    }

    private func adapterPowered(_ powered: Bool) async {
        guard !closed, registered else { return }
        observer?(.adapterPowered(powered))
        if !powered {
            if let current { await current.close() }
            return
        }
        // Whatever bluetoothd kept of the advertisement across the power cycle, register it afresh.
        await unadvertise()
        try? await advertise()
    }

    private func advertise() async throws(BlueZError) {
        guard !advertising, !closed else { return }
        _ = try await bus.bluez(
            adapterPath, BlueZ.advertisingManager, "RegisterAdvertisement",
            [.objectPath(Self.advertisementPath), .properties([:])])
        advertising = true
    }

    private func unadvertise() async {
        guard advertising else { return }
        advertising = false
        _ = try? await bus.bluez(adapterPath, BlueZ.advertisingManager, "UnregisterAdvertisement", [.objectPath(Self.advertisementPath)], timeout: .seconds(5))
    }

    // MARK: Links

    /// The next sender's link. Throws `linkLost` once the peripheral is closed, and
    /// `bluetoothdNotRunning` (or what re-registering failed with) when bluetoothd went away and
    /// did not come back within `recoveryTimeout`.
    public func accept() async throws(BlueZError) -> GattLink {
        if !pendingLinks.isEmpty { return pendingLinks.removeFirst() }
        if let failure { throw failure }
        guard !closed else { throw BlueZError.linkLost }
        let link = await withCheckedContinuation { acceptWaiters.append($0) }
        guard let link else { throw failure ?? BlueZError.linkLost }
        return link
    }

    /// Registers the GATT application with bluetoothd afresh. bluetoothd 5.66 can stop handing a
    /// characteristic's writes over for good (it never calls `AcquireWrite` again and drops the
    /// values) after a sender vanished while the socket was being acquired; seen in the lab after a
    /// receiver restart under a live link. A new registration starts from a clean slate.
    public func registerApplicationAgain() async throws(BlueZError) {
        guard !closed, registered else { return }
        _ = try? await bus.bluez(adapterPath, BlueZ.gattManager, "UnregisterApplication", [.objectPath(Self.appPath)], timeout: .seconds(5))
        registered = false
        try await registerWithBluez()
    }

    /// Ends the BLE connection of `link`'s peer: a sender that failed the handshake, went silent
    /// or broke the protocol would otherwise keep holding the link (the receiver only closed its
    /// sockets). Nothing is done if that peer has already opened a newer link.
    public func disconnectPeer(of link: GattLink) async {
        guard let device = link.device, !closed else { return }
        if let current, current !== link, current.device == device, !current.isClosed { return }
        _ = try? await bus.bluez(device, BlueZ.device, "Disconnect", timeout: .seconds(5))
    }

    private func link(device: String?, mtu: Int?) async throws(DBusErrorReply) -> GattLink {
        guard !closed else { throw DBusErrorReply.failed("closed") }
        if let current, !current.isClosed {
            if device == nil || current.device == nil || current.device == device {
                if let mtu { current.updateMTU(mtu) }
                return current
            }
            await current.close()  // a different peer: the old link is over
        }
        let link = GattLink(device: device, mtu: mtu ?? 23, sendsNotifications: true)
        current = link
        link.onClose { [weak self] in await self?.linkClosed(link) }
        if acceptWaiters.isEmpty { pendingLinks.append(link) } else { acceptWaiters.removeFirst().resume(returning: link) }
        return link
    }

    private func acquire(_ call: DBusMessage, write: Bool) async throws -> [DBusValue] {
        let options = GattRequestOptions.acquire(call)
        let mtu = options.mtu ?? 23
        let link = try await link(device: options.device, mtu: mtu)
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw DBusErrorReply.failed("socketpair: errno \(errno)")
        }
        if write {
            // bluetoothd forwards each incoming Write Command into its end with MSG_DONTWAIT and
            // silently drops the value on EAGAIN. For a unix socket the sender's send buffer bounds
            // what can wait for us, so give bluetoothd's end room for well over a full window.
            Self.enlargeSendBuffer(pair[1], bytes: 4 << 20)
            link.attachInbound(fd: pair[0])
        } else {
            link.attachOutbound(fd: pair[0], mtu: mtu)
        }
        // pair[1] goes to bluetoothd; the connection closes our copy after sending (transfersFDs).
        return [.unixFD(pair[1]), .uint16(UInt16(clamping: mtu))]
    }

    /// SO_SNDBUFFORCE (needs CAP_NET_ADMIN) past `wmem_max`, else plain SO_SNDBUF (capped by the kernel).
    static func enlargeSendBuffer(_ fd: Int32, bytes: Int32) {
        var size = bytes
        let len = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, len) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, len)
        }
    }

    private func startNotify() async throws {
        let link = try await link(device: nil, mtu: nil)
        let bus = self.bus
        let path = Self.transferPath
        link.setSink { datagram in
            try await bus.emitPropertiesChanged(path: path, interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(datagram)])
        }
        app.setProperty(path: path, interface: BlueZ.gattCharacteristic, name: "Notifying", value: .bool(true))
    }

    private func stopNotify() {
        current?.setSink(nil)
        app.setProperty(path: Self.transferPath, interface: BlueZ.gattCharacteristic, name: "Notifying", value: .bool(false))
    }

    private func deviceDisconnected(_ path: String) async {
        guard let current, current.device == nil || current.device == path else { return }
        await current.close()
    }

    private func linkClosed(_ link: GattLink) async {
        if current === link { current = nil }
        app.setProperty(path: Self.transferPath, interface: BlueZ.gattCharacteristic, name: "Notifying", value: .bool(false))
        guard !closed else { return }
        // Advertise again for the next sender.
        await unadvertise()
        try? await advertise()
    }

    /// Unregisters the advertisement and the application, closes the current link.
    public func close() async {
        guard !closed else { return }
        closed = true
        for w in watchers { w.cancel() }
        if let current { await current.close() }
        await unadvertise()
        if registered {
            registered = false
            _ = try? await bus.bluez(adapterPath, BlueZ.gattManager, "UnregisterApplication", [.objectPath(Self.appPath)], timeout: .seconds(5))
        }
        await bus.unexport(path: Self.appPath)
        await bus.unexport(path: Self.advertisementPath)
        for w in acceptWaiters { w.resume(returning: nil) }
        acceptWaiters.removeAll()
        if ownsBus { await bus.close() }
    }
}
