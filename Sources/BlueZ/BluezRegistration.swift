import DBus

/// What bluetoothd holds for us on one adapter: the GATT application (GattManager1) and the
/// advertisement (LEAdvertisingManager1), both exported at fixed paths, and the calls that
/// register, renew and withdraw them.
///
/// The calls run one at a time. The actor alone does not ensure that: a power change or a link's
/// end can ask for the advertisement again while `RegisterAdvertisement` is still waiting for its
/// reply, and bluetoothd answers the second registration from the same connection with
/// `AlreadyExists` (seen in the lab: a receiver that started right after bluetoothd restarted
/// failed to start with it).
actor BluezRegistration {
    private let bus: DBusConnection
    private let adapterPath: String
    private let applicationPath: String
    private let advertisementPath: String
    /// Whether bluetoothd has our application.
    private(set) var applicationRegistered = false
    private var advertising = false
    private var closed = false
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Run before every `RegisterAdvertisement` (fresh private-discovery data: a new salt).
    private let beforeAdvertising: (@Sendable () -> Void)?

    init(bus: DBusConnection, adapterPath: String, applicationPath: String, advertisementPath: String,
         beforeAdvertising: (@Sendable () -> Void)? = nil) {
        self.beforeAdvertising = beforeAdvertising
        self.bus = bus
        self.adapterPath = adapterPath
        self.applicationPath = applicationPath
        self.advertisementPath = advertisementPath
    }

    /// Registers whatever bluetoothd does not have yet: the application, then the advertisement.
    func registerMissing() async throws(BlueZError) {
        try await oneAtATime { () async throws(BlueZError) in try await self.registerMissingNow() }
    }

    private func registerMissingNow() async throws(BlueZError) {
        if !applicationRegistered {
            _ = try await bus.bluez(adapterPath, BlueZ.gattManager, "RegisterApplication", [.objectPath(applicationPath), .properties([:])])
            applicationRegistered = true
        }
        try await advertise()
    }

    /// Registers the advertisement afresh, whatever bluetoothd kept of it (a link ended, the
    /// adapter was powered on again).
    func advertiseAgain() async {
        try? await oneAtATime { () async throws(BlueZError) in
            await self.unadvertise()
            try await self.advertise()
        }
    }

    /// bluetoothd left the bus, and everything it held for us went with it.
    func forget() {
        applicationRegistered = false
        advertising = false
    }

    /// Registers the application with bluetoothd afresh. bluetoothd 5.66 can stop handing a
    /// characteristic's writes over for good (it never calls `AcquireWrite` again and drops the
    /// values) after a sender vanished while the socket was being acquired; seen in the lab after a
    /// receiver restart under a live link. A new registration starts from a clean slate.
    func registerApplicationAgain() async throws(BlueZError) {
        try await oneAtATime { () async throws(BlueZError) in
            guard !self.closed, self.applicationRegistered else { return }
            _ = try? await self.bus.bluez(
                self.adapterPath, BlueZ.gattManager, "UnregisterApplication", [.objectPath(self.applicationPath)], timeout: .seconds(5))
            self.applicationRegistered = false
            try await self.registerMissingNow()
        }
    }

    /// Withdraws the advertisement and the application; nothing is registered again.
    func close() async {
        closed = true
        await oneAtATime { () async in
            await self.unadvertise()
            if self.applicationRegistered {
                self.applicationRegistered = false
                _ = try? await self.bus.bluez(
                    self.adapterPath, BlueZ.gattManager, "UnregisterApplication", [.objectPath(self.applicationPath)], timeout: .seconds(5))
            }
        }
    }

    /// Runs `body` once no other registration call is under way.
    private func oneAtATime<E: Error>(_ body: () async throws(E) -> Void) async throws(E) {
        while busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            busy = false
            if !waiting.isEmpty { waiting.removeFirst().resume() }
        }
        try await body()
    }

    private func advertise() async throws(BlueZError) {
        guard !advertising, !closed else { return }
        beforeAdvertising?()
        _ = try await bus.bluez(
            adapterPath, BlueZ.advertisingManager, "RegisterAdvertisement", [.objectPath(advertisementPath), .properties([:])])
        advertising = true
    }

    private func unadvertise() async {
        guard advertising else { return }
        advertising = false
        _ = try? await bus.bluez(adapterPath, BlueZ.advertisingManager, "UnregisterAdvertisement", [.objectPath(advertisementPath)], timeout: .seconds(5))
    }
}
