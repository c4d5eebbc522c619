import DBus
import Glibc
import Synchronization
import TestSupport
import Testing
@testable import BlueZ

/// A stand-in for bluetoothd on a private bus: it owns `org.bluez` (and can let it go and take it
/// back, as a restarting bluetoothd does), serves one powered adapter with the GATT and advertising
/// managers, and reads a registered application back with `GetManagedObjects`, as bluetoothd does.
final class FakeBluetoothd: Sendable {
    static let adapter = "/org/bluez/hci0"
    let connection: DBusConnection
    let tree: DBusObjectTree
    /// The manager calls received, in order ("RegisterApplication", ...).
    let calls = Mutex<[String]>([])
    /// What `GetManagedObjects` answered at the last `RegisterApplication`.
    let application = Mutex<DBusManagedObjects?>(nil)
    /// The connection that registered the application.
    let peripheral = Mutex<String?>(nil)
    /// The connections with an advertisement registered.
    let advertisers = Mutex<Set<String>>([])
    /// Runs inside `RegisterAdvertisement`, before it answers.
    let whileRegisteringAdvertisement = Mutex<(@Sendable () async throws -> Void)?>(nil)

    init(address: String) async throws {
        connection = try await DBusConnection.connect(.address(address))
        tree = try DBusObjectTree(root: "/")
        try tree.setObject(path: Self.adapter, interfaces: [BlueZ.adapter: ["Powered": .bool(true), "Address": .string("00:AA:01:00:00:00")]])
        try tree.setMethod(path: Self.adapter, interface: BlueZ.gattManager, member: "RegisterApplication") { [self] call in
            record("RegisterApplication")
            guard let sender = call.sender, let path = try call.argument(0).objectPath else { throw DBusErrorReply.invalidArgs("(oa{sv})") }
            let objects = try await connection.managedObjects(destination: sender, path: path)
            application.withLock { $0 = objects }
            peripheral.withLock { $0 = sender }
            return []
        }
        // As bluetoothd: a second advertisement from the same connection and path is refused.
        try tree.setMethod(path: Self.adapter, interface: BlueZ.advertisingManager, member: "RegisterAdvertisement") { [self] call in
            record("RegisterAdvertisement")
            if let during = whileRegisteringAdvertisement.withLock({ $0 }) { try await during() }
            let sender = call.sender ?? ""
            guard advertisers.withLock({ $0.insert(sender).inserted }) else {
                throw DBusErrorReply(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
            }
            return []
        }
        try tree.setMethod(path: Self.adapter, interface: BlueZ.advertisingManager, member: "UnregisterAdvertisement") { [self] call in
            record("UnregisterAdvertisement")
            _ = advertisers.withLock { $0.remove(call.sender ?? "") }
            return []
        }
        for (iface, member) in [(BlueZ.gattManager, "UnregisterApplication")] {
            try tree.setMethod(path: Self.adapter, interface: iface, member: member) { [self] _ in
                record(member)
                return []
            }
        }
        try await tree.export(on: connection)
        try await claimName()
    }

    private func record(_ call: String) { calls.withLock { $0.append(call) } }

    func claimName() async throws {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(BlueZ.service), .uint32(0)])
        #expect(reply.first == .uint32(1))  // primary owner
    }

    /// Leaves the bus as bluetoothd does when it stops, forgetting what was registered.
    func releaseName() async throws {
        advertisers.withLock { $0 = [] }
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReleaseName", arguments: [.string(BlueZ.service)])
    }

    func setPowered(_ on: Bool) async throws {
        tree.setProperty(path: Self.adapter, interface: BlueZ.adapter, name: "Powered", value: .bool(on))
        try await connection.emitPropertiesChanged(path: Self.adapter, interface: BlueZ.adapter, changed: ["Powered": .bool(on)])
    }

    func disconnected(_ device: String) async throws {
        try await connection.emitPropertiesChanged(path: device, interface: BlueZ.device, changed: ["Connected": .bool(false)])
    }

    /// A call on the registered application's transfer characteristic, as bluetoothd makes it.
    func callTransfer(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        let destination = try #require(peripheral.withLock { $0 })
        return try await connection.call(
            destination: destination, path: GattPeripheral.appPath + "/service0/char0", interface: BlueZ.gattCharacteristic,
            member: member, arguments: arguments)
    }
}

/// Waits until `condition` holds, for up to 60 s: under `swift test --parallel` the CPU-bound
/// suites can starve these tasks for many seconds.
func eventually(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        if ContinuousClock.now > deadline { return }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// The whole peripheral against the stand-in bluetoothd: registration, links, and the recovery
/// from bluetoothd leaving and the adapter being powered off. (The VM lab runs the same against
/// the real bluetoothd.)
@Suite("GATT peripheral against a stand-in bluetoothd", .timeLimit(.minutes(2)))
struct GattPeripheralTests {
    let device = FakeBluetoothd.adapter + "/dev_00_AA_01_01_00_01"

    /// The events a peripheral reported.
    final class Events: Sendable {
        private let list = Mutex<[GattPeripheral.Event]>([])
        func append(_ event: GattPeripheral.Event) { list.withLock { $0.append(event) } }
        var all: [GattPeripheral.Event] { list.withLock { $0 } }
    }

    func withPeripheral(_ body: (GattPeripheral, FakeBluetoothd, Events) async throws -> Void) async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        let peripheral = try await GattPeripheral.start(adapter: "hci0", bus: connection)
        let events = Events()
        await peripheral.observe { event in events.append(event) }
        do {
            try await body(peripheral, bluetoothd, events)
        } catch {
            await peripheral.close()
            await connection.close()
            await bluetoothd.connection.close()
            throw error
        }
        await peripheral.close()
        await connection.close()
        await bluetoothd.connection.close()
    }

    @Test func registersTheApplicationItDeclaresAndTheAdvertisement() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            #expect(peripheral.adapterPath == FakeBluetoothd.adapter)
            #expect(bluetoothd.calls.withLock { $0 } == ["RegisterApplication", "RegisterAdvertisement"])
            var expected: DBusManagedObjects = [:]
            let model = GattApplicationObjects(BlesendGATT.application(versionCharacteristic: true), root: GattPeripheral.appPath)
            for object in model.objects { expected[object.path] = [object.interface: object.properties] }
            #expect(bluetoothd.application.withLock { $0 } == expected)

            await peripheral.close()
            #expect(bluetoothd.calls.withLock { $0 }.suffix(2) == ["UnregisterAdvertisement", "UnregisterApplication"])
            await #expect(throws: BlueZError.linkLost) { try await peripheral.accept() }
        }
    }

    @Test func aSendersCallsBecomeALinkUntilItsDeviceDisconnects() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            let options: DBusValue = .properties(["device": .objectPath(device), "mtu": .uint16(247)])
            let reply = try await bluetoothd.callTransfer("AcquireWrite", [options])
            let fd = try #require(reply.first?.unixFD)
            #expect(reply.last == .uint16(247))
            let link = try #require(try await peripheral.accept().gattLink)
            #expect(link.device == device)
            #expect(link.mtu == 247)
            let sent = [UInt8]([1, 2]).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            #expect(sent == 2)
            #expect(try await link.receive() == [1, 2])

            // The device goes: the link ends and the receiver advertises again.
            try await bluetoothd.disconnected(device)
            try await eventually { link.isClosed && bluetoothd.calls.withLock { $0 }.count == 4 }
            #expect(link.isClosed)
            #expect(bluetoothd.calls.withLock { $0 } == [
                "RegisterApplication", "RegisterAdvertisement", "UnregisterAdvertisement", "RegisterAdvertisement",
            ])
            close(fd)
        }
    }

    @Test func aLinkEndedWhileItsDeviceStaysConnectedAdvertisesOnlyOnceTheDeviceDisconnects() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([7]), .properties(["device": .objectPath(device)])])
            let link = try #require(try await peripheral.accept().gattLink)

            // The sockets close a moment before the LE link goes (as an L2CAP channel's do):
            // registering the advertisement now would leave the kernel re-enabling a stale instance
            // (GattPeripheral.deviceDisconnected).
            await link.close()
            try await Task.sleep(for: .milliseconds(300))
            #expect(bluetoothd.calls.withLock { $0 } == ["RegisterApplication", "RegisterAdvertisement"])

            try await bluetoothd.disconnected(device)
            try await eventually { bluetoothd.calls.withLock { $0 }.count == 4 }
            #expect(bluetoothd.calls.withLock { $0 }.suffix(2) == ["UnregisterAdvertisement", "RegisterAdvertisement"])
        }
    }

    @Test func anAdapterPoweredOffEndsTheLinkAndPoweredOnAdvertisesAgain() async throws {
        try await withPeripheral { peripheral, bluetoothd, events in
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([7]), .properties(["device": .objectPath(device)])])
            let link = try #require(try await peripheral.accept().gattLink)
            #expect(try await link.receive() == [7])

            try await bluetoothd.setPowered(false)
            try await eventually { link.isClosed && events.all == [.adapterPowered(false)] }
            #expect(link.isClosed)
            #expect(events.all == [.adapterPowered(false)])

            let before = bluetoothd.calls.withLock { $0 }.count
            try await bluetoothd.setPowered(true)
            try await eventually { bluetoothd.calls.withLock { $0 }.count >= before + 2 && events.all.count == 2 }
            #expect(events.all == [.adapterPowered(false), .adapterPowered(true)])
            #expect(bluetoothd.calls.withLock { $0 }.suffix(2) == ["UnregisterAdvertisement", "RegisterAdvertisement"])
        }
    }

    /// A power change while the advertisement is being registered (a receiver started just after
    /// bluetoothd came back) waits for that registration instead of racing it into `AlreadyExists`.
    @Test func aPowerChangeDuringStartWaitsForTheRegistrationUnderWay() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        bluetoothd.whileRegisteringAdvertisement.withLock {
            $0 = { [bluetoothd] in
                bluetoothd.whileRegisteringAdvertisement.withLock { $0 = nil }
                try await bluetoothd.setPowered(true)
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        let connection = try await DBusConnection.connect(.address(bus.address))
        let peripheral = try await GattPeripheral.start(adapter: "hci0", bus: connection)
        try await eventually { bluetoothd.calls.withLock { $0 }.count >= 4 }
        #expect(bluetoothd.calls.withLock { $0 } == [
            "RegisterApplication", "RegisterAdvertisement", "UnregisterAdvertisement", "RegisterAdvertisement",
        ])
        #expect(bluetoothd.advertisers.withLock { $0.count } == 1)
        await peripheral.close()
        await connection.close()
        await bluetoothd.connection.close()
    }

    @Test func bluetoothdLeavingAndComingBackRegistersEverythingAgain() async throws {
        try await withPeripheral { peripheral, bluetoothd, events in
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([7]), .properties(["device": .objectPath(device)])])
            let link = try #require(try await peripheral.accept().gattLink)

            try await bluetoothd.releaseName()
            try await eventually { link.isClosed && events.all == [.bluetoothdGone] }
            #expect(link.isClosed)
            #expect(events.all == [.bluetoothdGone])

            bluetoothd.calls.withLock { $0 = [] }
            try await bluetoothd.claimName()
            try await eventually { events.all.count == 2 }
            #expect(events.all == [.bluetoothdGone, .registeredAgain])
            // The application once, and the advertisement.
            let calls = bluetoothd.calls.withLock { $0 }
            #expect(calls.filter { $0 == "RegisterApplication" }.count == 1)
            #expect(calls.contains("RegisterAdvertisement"))
            #expect(Set(calls).isSubset(of: ["RegisterApplication", "RegisterAdvertisement", "UnregisterAdvertisement"]))

            // And the next sender is served.
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([8]), .properties(["device": .objectPath(device)])])
            let next = try #require(try await peripheral.accept().gattLink)
            #expect(next !== link)
            #expect(try await next.receive() == [8])
        }
    }

    @Test func registeringTheApplicationAgainReplacesIt() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            try await peripheral.registerApplicationAgain()
            #expect(bluetoothd.calls.withLock { $0 } == [
                "RegisterApplication", "RegisterAdvertisement", "UnregisterApplication", "RegisterApplication",
            ])
        }
    }
}
