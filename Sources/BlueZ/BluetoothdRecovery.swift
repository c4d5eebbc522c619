import DBus
import Synchronization

/// Keeps a peripheral served while bluetoothd and the adapter come and go.
///
/// - bluetoothd leaves the bus (`NameOwnerChanged` of `org.bluez`): the current link ends. Once it
///   is back, the application and the advertisement are registered again, retrying until it takes
///   them (it claims its name before it has added the adapters). If it stays away, or unusable,
///   for `timeout`, the accept queue fails with `bluetoothdNotRunning` (or what registering failed with).
/// - The adapter is powered off: the current link ends. Powered on: the advertisement is
///   registered afresh.
actor BluetoothdRecovery {
    typealias Observer = @Sendable (GattPeripheral.Event) -> Void

    private let bus: DBusConnection
    private let adapterPath: String
    private let registration: BluezRegistration
    private let server: TransferCharacteristicServer
    private let links: AcceptQueue<PeerConnection>
    private let timeout: Duration
    private let observer = Mutex<Observer?>(nil)
    private var watchers: [Task<Void, Never>] = []
    /// Counts bluetoothd's departures, so that a stale deadline does nothing.
    private var epoch = 0
    private var stopped = false

    init(
        bus: DBusConnection, adapterPath: String, registration: BluezRegistration, server: TransferCharacteristicServer,
        links: AcceptQueue<PeerConnection>, timeout: Duration
    ) {
        self.bus = bus
        self.adapterPath = adapterPath
        self.registration = registration
        self.server = server
        self.links = links
        self.timeout = timeout
    }

    /// Receives every `GattPeripheral.Event` from now on (called on this actor; keep it short).
    nonisolated func observe(_ observer: @escaping Observer) {
        self.observer.withLock { $0 = observer }
    }

    /// Watches the adapter's power and bluetoothd itself. (A match rule with sender org.bluez
    /// follows the name to a restarted bluetoothd.)
    func start() async throws(BlueZError) {
        let power: AsyncStream<DBusPropertiesChanged>
        let owners: AsyncStream<DBusMessage>
        do {
            power = try await bus.propertiesChanged(sender: BlueZ.service, path: adapterPath, interface: BlueZ.adapter)
            owners = try await bus.signals(matching: DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZ.service))
        } catch {
            throw BlueZError.from(error)
        }
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
                if newOwner.isEmpty { await self?.bluetoothdGone() } else { await self?.bluetoothdBack() }
            }
        })
    }

    /// Stops watching; nothing is recovered from now on.
    func stop() {
        stopped = true
        for watcher in watchers { watcher.cancel() }
    }

    private func report(_ event: GattPeripheral.Event) {
        observer.withLock { $0 }?(event)
    }

    private func bluetoothdGone() async {
        guard !stopped else { return }
        epoch += 1
        let epoch = self.epoch
        // Everything bluetoothd held for us is gone with it.
        await registration.forget()
        report(.bluetoothdGone)
        await server.closeCurrent()
        Task { [weak self, timeout] in
            try? await Task.sleep(for: timeout)
            await self?.giveUpUnlessBack(epoch)
        }
    }

    private func bluetoothdBack() async {
        guard !stopped else { return }
        await registration.forget()
        let epoch = self.epoch
        // bluetoothd claims its name before it has added the adapters: retry until it takes us.
        let deadline = ContinuousClock.now + timeout
        while !stopped, epoch == self.epoch {
            do {
                try await registration.registerMissing()
                report(.registeredAgain)
                return
            } catch {
                if ContinuousClock.now > deadline {
                    links.fail(error)
                    return
                }
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    private func giveUpUnlessBack(_ epoch: Int) async {
        guard epoch == self.epoch, !stopped else { return }
        let registered = await registration.applicationRegistered
        guard epoch == self.epoch, !registered else { return }
        links.fail(.bluetoothdNotRunning)
    }

    private func adapterPowered(_ powered: Bool) async {
        guard !stopped, await registration.applicationRegistered else { return }
        report(.adapterPowered(powered))
        if !powered {
            await server.closeCurrent()
            return
        }
        // Whatever bluetoothd kept of the advertisement across the power cycle, register it afresh.
        await registration.advertiseAgain()
    }
}
