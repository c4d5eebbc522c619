import DBus
import Glibc

/// Serves the transfer characteristic's calls (`GattCharacteristicHandler`): each belongs to the
/// current `GattLink`, which the first call from a new peer starts and hands to the accept queue.
/// Acquired sockets become the link's inbound (the peer's writes) and outbound (our notifications)
/// paths; `WriteValue` and `StartNotify` are the D-Bus ways of the same. The current link ends
/// when its device disconnects, when another peer calls, or on `closeCurrent()`.
actor TransferCharacteristicServer: GattCharacteristicHandler {
    private let notifier: GattNotifier
    private let links: AcceptQueue<PeerConnection>
    private var current: GattLink?
    private var closed = false
    private var deviceGone: (@Sendable (String) async -> Void)?
    /// Told of every device's link coming up (true) and going down (false): `DeviceLinkSignal`.
    private var linkObserver: (@Sendable (String, Bool) -> Void)?
    /// The tasks reading bluetoothd's device signals (`watchDisconnects`).
    private var watchers: [Task<Void, Never>] = []

    init(notifier: GattNotifier, links: AcceptQueue<PeerConnection>) {
        self.notifier = notifier
        self.links = links
    }

    /// Runs `action` with the device path whenever a device under the adapter reports `Connected`
    /// false (the peripheral ends that device's L2CAP channel with it).
    func onDeviceDisconnected(_ action: @escaping @Sendable (String) async -> Void) {
        deviceGone = action
    }

    /// Tells `observer` of every device under the adapter whose link comes up or goes down.
    func observeLinks(_ observer: @escaping @Sendable (String, Bool) -> Void) {
        linkObserver = observer
    }

    /// Ends the current link when its device's link ends (any device under `adapterPath`), and
    /// tells the link observer of links coming up and going down (`DeviceLinkSignal`).
    func watchDisconnects(bus: DBusConnection, adapterPath: String) async throws(BlueZError) {
        let changes: AsyncStream<DBusPropertiesChanged>
        let objects: AsyncStream<DBusObjectManagerEvent>
        do {
            changes = try await bus.propertiesChanged(sender: BlueZ.service, pathNamespace: adapterPath, interface: BlueZ.device)
            objects = try await bus.objectManagerEvents(sender: BlueZ.service)
        } catch {
            throw BlueZError.from(error)
        }
        // (two streams, so a link's up and down may be heard out of order: a link then kept by
        // mistake is ended as bare, and bluetoothd's "not connected" forgets it, GattPeripheral)
        watchers.append(Task { [weak self] in
            for await change in changes {
                if let signal = DeviceLinkSignal(change) { await self?.linkChanged(signal) }
            }
        })
        watchers.append(Task { [weak self] in
            for await event in objects {
                if let signal = DeviceLinkSignal(event, adapterPath: adapterPath) { await self?.linkChanged(signal) }
            }
        })
    }

    // MARK: BlueZ's calls

    func acquireWrite(_ options: GattRequestOptions) async throws -> AcquiredSocket {
        try await acquire(options, write: true)
    }

    func acquireNotify(_ options: GattRequestOptions) async throws -> AcquiredSocket {
        try await acquire(options, write: false)
    }

    func writeValue(_ value: [UInt8], options: GattRequestOptions) async throws {
        let link = try await link(device: options.device, mtu: options.mtu)
        link.deliver(value)
    }

    func startNotify() async throws {
        let link = try await link(device: nil, mtu: nil)
        link.setSink(notifier.notify)
        notifier.setNotifying(true)
    }

    func stopNotify() {
        current?.setSink(nil)
        notifier.setNotifying(false)
    }

    func readValue() -> [UInt8] { [] }

    private func acquire(_ options: GattRequestOptions, write: Bool) async throws -> AcquiredSocket {
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
        return AcquiredSocket(fd: pair[1], mtu: UInt16(clamping: mtu))
    }

    /// SO_SNDBUFFORCE (needs CAP_NET_ADMIN) past `wmem_max`, else plain SO_SNDBUF (capped by the kernel).
    static func enlargeSendBuffer(_ fd: Int32, bytes: Int32) {
        var size = bytes
        let len = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, len) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, len)
        }
    }

    // MARK: The current link

    /// The link a call from `device` belongs to: the current one, unless it is closed or another
    /// peer's (then a new one, handed to the accept queue).
    private func link(device: String?, mtu: Int?) async throws(DBusErrorReply) -> GattLink {
        guard !closed else { throw DBusErrorReply.failed("closed") }
        if let current, !current.isClosed {
            if device == nil || current.device == nil || current.device == device {
                if let mtu { current.updateMTU(mtu) }
                return current
            }
            // Another peer: the old link is over, unless its sender authenticated. GATT carries one
            // sender at a time (bluetoothd sends a characteristic's notifications to every
            // subscribed device), and a stranger must not end a transfer by calling.
            if current.isAuthenticated { throw DBusErrorReply.inProgress("another sender is being served") }
            await current.close()
        }
        let link = GattLink(device: device, mtu: mtu ?? 23, sendsNotifications: true)
        current = link
        link.onClose { [weak self] in await self?.linkClosed(link) }
        guard links.offer(PeerConnection(transport: link, device: device)) else {
            // The receiver has not taken the links before it (AcceptQueue's capacity): refused.
            await link.close()
            throw DBusErrorReply.inProgress("busy")
        }
        return link
    }

    /// The device of the current link while it is up (nil when unknown or none).
    func currentDevice() -> String? {
        guard let current, !current.isClosed else { return nil }
        return current.device
    }

    /// Whether `link`'s peer has opened a newer link that is still up.
    func hasNewerLink(than link: GattLink) -> Bool {
        guard let current, current !== link, current.device == link.device, !current.isClosed else { return false }
        return true
    }

    /// Ends the current link (bluetoothd went away, the adapter was powered off).
    func closeCurrent() async {
        if let current { await current.close() }
    }

    private func linkChanged(_ signal: DeviceLinkSignal) async {
        linkObserver?(signal.device, signal.up)
        guard !signal.up else { return }
        let path = signal.device
        await deviceGone?(path)
        guard let current, current.device == nil || current.device == path else { return }
        await current.close()
    }

    private func linkClosed(_ link: GattLink) async {
        if current === link { current = nil }
        notifier.setNotifying(false)
    }

    /// Ends the current link and refuses every later call.
    func close() async {
        closed = true
        for watcher in watchers { watcher.cancel() }
        if let current { await current.close() }
    }
}
