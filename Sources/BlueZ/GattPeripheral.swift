import DBus
import Glibc
import Pipeline

/// The receiver side: a GATT application with the transfer service, plus an LE advertisement.
/// Each BLE connection from a sender becomes a `GattLink` returned by `accept()`; one link at a time,
/// several senders one after another (the advertisement is re-registered after each disconnect).
public actor GattPeripheral {
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
    private var watcher: Task<Void, Never>?
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

    private func register() async throws(BlueZError) {
        do {
            try installMethods()
            try await app.export(on: bus, transfersFDs: true)
            try await advertisement.export(on: bus)
        } catch {
            throw BlueZError.dbus(error)
        }
        // Watch for disconnects of the current peer.
        let changes: AsyncStream<DBusPropertiesChanged>
        do {
            changes = try await bus.propertiesChanged(sender: BlueZ.service, pathNamespace: adapterPath, interface: BlueZ.device)
        } catch {
            throw BlueZError.from(error)
        }
        watcher = Task { [weak self] in
            for await change in changes {
                guard change.changed["Connected"]?.bool == false else { continue }
                await self?.deviceDisconnected(change.path)
            }
        }
        _ = try await bus.bluez(adapterPath, BlueZ.gattManager, "RegisterApplication", [.objectPath(Self.appPath), .properties([:])])
        registered = true
        try await advertise()
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

    /// The next sender's link. Throws `linkLost` once the peripheral is closed.
    public func accept() async throws(BlueZError) -> GattLink {
        if !pendingLinks.isEmpty { return pendingLinks.removeFirst() }
        guard !closed else { throw BlueZError.linkLost }
        let link = await withCheckedContinuation { acceptWaiters.append($0) }
        guard let link else { throw BlueZError.linkLost }
        return link
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
        watcher?.cancel()
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
