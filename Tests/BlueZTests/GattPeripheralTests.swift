import BluetoothdStandIn
import DBus
import Glibc
import Synchronization
import TestSupport
import Testing
@testable import BlueZ

extension FakeBluetoothd {
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

    /// The stand-in bluetoothd (org.bluez's owner) registered and read everything; another
    /// connection on the bus is refused on every object the peripheral exports, and its calls
    /// make no link.
    @Test func onlyOrgBluezsOwnerMayCallThePeripheralsObjects() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        let stranger = try await DBusConnection.connect(.address(bus.address))
        let peripheral = try await GattPeripheral.start(adapter: "hci0", bus: connection)
        #expect(bluetoothd.calls.withLock { $0 } == ["RegisterApplication", "RegisterAdvertisement"])
        #expect(bluetoothd.application.withLock { $0 }?.isEmpty == false)
        let transfer = GattPeripheral.appPath + "/service0/char0"
        let calls: [(String, String, String, [DBusValue])] = [
            (GattPeripheral.appPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", []),
            (transfer, BlueZ.gattCharacteristic, "AcquireWrite", [.properties(["device": .objectPath(device), "mtu": .uint16(185)])]),
            (transfer, BlueZ.gattCharacteristic, "WriteValue", [.bytes([1]), .properties(["device": .objectPath(device)])]),
            (transfer, BlueZ.gattCharacteristic, "StartNotify", []),
            (GattPeripheral.advertisementPath, "org.freedesktop.DBus.Properties", "GetAll", [.string(BlueZ.advertisement)]),
        ]
        for (path, interface, member, arguments) in calls {
            do {
                let reply = try await stranger.call(destination: connection.uniqueName, path: path, interface: interface,
                                                    member: member, arguments: arguments)
                closeUnixFDs(reply)
                Issue.record("\(member) from a stranger was answered")
            } catch .remote(let remote) {
                #expect(remote.name == "org.freedesktop.DBus.Error.AccessDenied", "\(member): \(remote)")
            } catch {
                Issue.record("\(member): \(error)")
            }
        }
        // bluetoothd's own calls still reach the characteristic.
        _ = try await bluetoothd.callTransfer("StartNotify", [])
        await peripheral.close()
        await connection.close()
        await stranger.close()
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

            // The device goes: the link ends. The advertisement stays as it is (the kernel enables
            // it again), never registered afresh (GattPeripheral.deviceDisconnected).
            try await bluetoothd.disconnected(device)
            try await eventually { link.isClosed }
            try await Task.sleep(for: .milliseconds(300))
            #expect(bluetoothd.calls.withLock { $0 } == ["RegisterApplication", "RegisterAdvertisement"])
            close(fd)
        }
    }

    /// A link that opened no transfer channel in time is ended, unless its device is paired or
    /// bonded with the adapter (a keyboard or a headset back from sleep, a pairing that finished
    /// meanwhile): that one is left up, and bluetoothd is not asked (issue 31, item 1).
    @Test func aBareLinkIsEndedUnlessItsDeviceIsPaired() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            let devices: [(path: String, properties: [String: DBusValue])] = [
                (device, ["Paired": .bool(true)]),
                (FakeBluetoothd.adapter + "/dev_00_AA_01_02_00_02", ["Paired": .bool(false), "Bonded": .bool(true)]),
                (FakeBluetoothd.adapter + "/dev_00_AA_01_03_00_03", ["Paired": .bool(false), "Bonded": .bool(false)]),
                (FakeBluetoothd.adapter + "/dev_00_AA_01_04_00_04", [:]),   // 5.66: no Bonded; Paired unknown
            ]
            for (path, properties) in devices {
                try bluetoothd.tree.setObject(path: path, interfaces: [BlueZ.device: properties.merging([
                    "Adapter": .objectPath(FakeBluetoothd.adapter), "Connected": .bool(true),
                    "Address": .string(String(path.suffix(17).map { $0 == "_" ? ":" : $0 })), "AddressType": .string("public"),
                ]) { a, _ in a }])
                try bluetoothd.tree.setMethod(path: path, interface: BlueZ.device, member: "Disconnect") { _ in
                    bluetoothd.calls.withLock { $0.append("Disconnect " + path) }
                    return []
                }
            }
            var endings: [GattPeripheral.BareLinkEnding] = []
            for (path, _) in devices { endings.append(await peripheral.endBareLink(device: path)) }
            #expect(endings == [.spared(.paired), .spared(.paired), .ended, .ended])
            #expect(bluetoothd.calls.withLock { $0 }.filter { $0.hasPrefix("Disconnect") } == devices[2...].map { "Disconnect " + $0.path })
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

    @Test func registeringTheApplicationAgainReplacesItOnceThePeersLinkHasEnded() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            try await bluetoothd.setDevice(device, connected: true)
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([7]), .properties(["device": .objectPath(device)])])
            let link = try await peripheral.accept()
            // bluetoothd ends the link a moment after the receiver asked it to.
            let drop = Task {
                try await Task.sleep(for: .milliseconds(300))
                try await bluetoothd.setDevice(device, connected: false)
            }
            #expect(try await peripheral.registerApplicationAgain(after: link, patience: .seconds(5)) == .renew)
            try await drop.value
            #expect(bluetoothd.calls.withLock { $0 } == [
                "RegisterApplication", "RegisterAdvertisement", "UnregisterApplication", "RegisterApplication",
            ])
            // A second silent peer right after: not again within the minute.
            #expect(try await peripheral.registerApplicationAgain(after: link, patience: .seconds(5)) == .skipTooSoon)
            #expect(bluetoothd.calls.withLock { $0 }.count == 4)
        }
    }

    /// Issue 20: unregistering the application under a live, subscribed peer took bluetoothd 5.66
    /// down. While the peer's link stays up, the application is left alone.
    @Test func theApplicationIsNotRegisteredAgainUnderALiveLink() async throws {
        try await withPeripheral { peripheral, bluetoothd, _ in
            try await bluetoothd.setDevice(device, connected: true)
            _ = try await bluetoothd.callTransfer("WriteValue", [.bytes([7]), .properties(["device": .objectPath(device)])])
            let link = try await peripheral.accept()
            #expect(try await peripheral.registerApplicationAgain(after: link, patience: .milliseconds(400)) == .skipLinkUp)
            #expect(!bluetoothd.calls.withLock { $0 }.contains("UnregisterApplication"))
        }
    }

    /// Private discovery: the advertisement carries the data as service data under the service
    /// UUID instead of the UUID list, and every registration asks for fresh data (a new salt).
    @Test func privateDiscoveryDataIsFreshAtEveryRegistration() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        let counter = Mutex<UInt8>(0)
        let peripheral = try await GattPeripheral.start(adapter: "hci0", discovery: {
            counter.withLock { $0 += 1; return [0x01] + Array(repeating: $0, count: 9) }
        }, bus: connection)
        // Registered afresh when the adapter comes back (as at every rotation).
        try await bluetoothd.setPowered(false)
        try await bluetoothd.setPowered(true)
        try await eventually { bluetoothd.advertisements.withLock { $0 }.count == 2 }
        let registered = bluetoothd.advertisements.withLock { $0 }
        #expect(registered.count == 2)
        for (n, properties) in registered.enumerated() {
            #expect(properties["ServiceUUIDs"] == nil)
            let data = properties["ServiceData"]?.properties?[BlesendGATT.serviceUUID]?.bytes
            // The first registration takes the second value: the first was made with the export.
            #expect(data == [0x01] + Array(repeating: UInt8(n + 2), count: 9))
        }
        await peripheral.close()
        await connection.close()
        await bluetoothd.connection.close()
    }

    @Test func aSenderRecognisesListedReceiversAndIgnoresDataItCannotRead() {
        let adapter = FakeBluetoothd.adapter
        func props(uuids: [String] = [], data: [UInt8]? = nil, rssi: Int16 = -40) -> [String: DBusValue] {
            var p: [String: DBusValue] = ["Adapter": .objectPath(adapter), "RSSI": .int16(rssi)]
            if !uuids.isEmpty { p["UUIDs"] = .strings(uuids) }
            if let data { p["ServiceData"] = .properties([BlesendGATT.serviceUUID: .bytes(data)]) }
            return p
        }
        let recognise: @Sendable ([UInt8]) -> Bool? = { data in data.first == 1 ? data.last == 0xAA : nil }
        func sight(_ p: [String: DBusValue], min: Int16? = -80) -> GattCentral.Sighting {
            GattCentral.sighting(p, adapterPath: adapter, minimumRSSI: min, recognises: recognise)
        }
        #expect(sight(props(data: [1, 0xAA])) == .listsUs)
        #expect(sight(props(data: [1, 0xBB])) == .otherReceiver)
        #expect(sight(props(data: [9, 0xAA])) == .plain)             // a layout it cannot read: ignored
        #expect(sight(props(uuids: [BlesendGATT.serviceUUID])) == .plain)
        #expect(sight(props(uuids: ["0000180f-0000-1000-8000-00805f9b34fb"])) == .none)
        #expect(sight(props(data: [1, 0xAA], rssi: -95)) == .none)    // too weak
        // A sender that does not look at the data: the UUID list alone decides.
        #expect(GattCentral.sighting(props(data: [1, 0xBB]), adapterPath: adapter, minimumRSSI: nil, recognises: nil) == .none)
    }

    /// Private discovery rotates the salt by registering afresh while nobody is connected, and
    /// never under a connected device.
    @Test func privateDiscoveryRotatesOnlyWhileNoDeviceIsConnected() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        let peripheral = try await GattPeripheral.start(adapter: "hci0", discovery: { [0x01] + Array(repeating: 0, count: 9) },
                                                        discoveryRotation: .milliseconds(200), bus: connection)
        try await eventually { bluetoothd.advertisements.withLock { $0 }.count >= 3 }
        #expect(bluetoothd.advertisements.withLock { $0 }.count >= 3)

        // A sender connects (bluetoothd lists it connected): no more registrations.
        try bluetoothd.tree.setObject(path: device, interfaces: [BlueZ.device: [
            "Adapter": .objectPath(FakeBluetoothd.adapter), "Connected": .bool(true),
        ]])
        // (A turn that looked before the device appeared may still be registering: let it finish.)
        try await Task.sleep(for: .seconds(1))
        let held = bluetoothd.advertisements.withLock { $0 }.count
        try await Task.sleep(for: .seconds(1))
        #expect(bluetoothd.advertisements.withLock { $0 }.count == held)
        await peripheral.close()
        await connection.close()
        await bluetoothd.connection.close()
    }

    /// A paired device that stays connected (a keyboard) is not one of our senders: the salt goes
    /// on changing. (Before, any connected device held the same salt for as long as it stayed.)
    @Test func aConnectedKeyboardDoesNotHoldTheSalt() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        try bluetoothd.tree.setObject(path: device, interfaces: [BlueZ.device: [
            "Adapter": .objectPath(FakeBluetoothd.adapter), "Connected": .bool(true), "Paired": .bool(true),
        ]])
        let peripheral = try await GattPeripheral.start(adapter: "hci0", discovery: { [0x01] + Array(repeating: 0, count: 9) },
                                                        discoveryRotation: .milliseconds(200), bus: connection)
        try await eventually { bluetoothd.advertisements.withLock { $0 }.count >= 4 }
        #expect(bluetoothd.advertisements.withLock { $0 }.count >= 4)
        await peripheral.close()
        await connection.close()
        await bluetoothd.connection.close()
    }
}
