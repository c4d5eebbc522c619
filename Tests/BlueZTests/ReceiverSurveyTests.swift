import BluetoothdStandIn
import DBus
import TestSupport
import Testing
@testable import BlueZ

/// `blesend scan`'s survey: which devices count as receivers (pure), and a whole survey against
/// the stand-in bluetoothd on a private bus.
@Suite("receiver survey", .timeLimit(.minutes(2)))
struct ReceiverSurveyTests {
    static let adapter = FakeBluetoothd.adapter
    static let service = BlesendGATT.serviceUUID

    static func device(_ address: String, type: String = "random", rssi: Int16? = nil, uuids: [String] = [],
                       serviceData: [String: [UInt8]] = [:], adapter: String = adapter) -> [String: DBusValue] {
        var props: [String: DBusValue] = [
            "Adapter": .objectPath(adapter), "Address": .string(address), "AddressType": .string(type),
            "UUIDs": .strings(uuids), "Connected": .bool(false), "Paired": .bool(false), "Trusted": .bool(false),
        ]
        if let rssi { props["RSSI"] = .int16(rssi) }
        if !serviceData.isEmpty { props["ServiceData"] = .properties(serviceData.mapValues { .bytes($0) }) }
        return props
    }

    static func path(_ address: String, adapter: String = adapter) -> String {
        adapter + "/dev_" + address.split(separator: ":").joined(separator: "_")
    }

    @Test func aDeviceIsAReceiverWhenItAdvertisesTheServiceInItsListOrAsServiceData() {
        let data: [UInt8] = [0x03, 0x61, 0, 0, 0, 0, 0, 0, 0, 0]
        let listed = NearbyReceiver(device: Self.path("00:AA:01:00:00:01"),
                                    properties: Self.device("00:AA:01:00:00:01", type: "public", rssi: -60, uuids: [Self.service.uppercased()]),
                                    adapterPath: Self.adapter)
        #expect(listed == NearbyReceiver(device: Self.path("00:AA:01:00:00:01"), address: "00:AA:01:00:00:01", addressType: "public",
                                         rssi: -60, serviceData: nil, listsService: true))
        let withData = NearbyReceiver(device: Self.path("5A:00:00:00:00:02"),
                                      properties: Self.device("5A:00:00:00:00:02", serviceData: [Self.service: data]), adapterPath: Self.adapter)
        #expect(withData?.serviceData == data && withData?.listsService == false && withData?.rssi == nil && withData?.addressType == "random")
        // Another service's UUID and data; another adapter's device.
        #expect(NearbyReceiver(device: Self.path("5A:00:00:00:00:03"),
                               properties: Self.device("5A:00:00:00:00:03", uuids: ["0000180f-0000-1000-8000-00805f9b34fb"],
                                                       serviceData: ["0000fe9f-0000-1000-8000-00805f9b34fb": [1, 2]]),
                               adapterPath: Self.adapter) == nil)
        #expect(NearbyReceiver(device: Self.path("5A:00:00:00:00:04", adapter: "/org/bluez/hci1"),
                               properties: Self.device("5A:00:00:00:00:04", uuids: [Self.service], adapter: "/org/bluez/hci1"),
                               adapterPath: Self.adapter) == nil)
        // No Address property: taken from the path.
        var noAddress = Self.device("5A:00:00:00:00:05", uuids: [Self.service])
        noAddress["Address"] = nil
        #expect(NearbyReceiver(device: Self.path("5A:00:00:00:00:05"), properties: noAddress, adapterPath: Self.adapter)?.address
            == "5A:00:00:00:00:05")
    }

    /// The last RSSI reported stays when bluetoothd invalidates it (a scan restart); later values win.
    @Test func sightingsMergeWhatWasReported() {
        var sightings = DeviceSightings()
        let device = Self.path("5A:00:00:00:00:01")
        #expect(!sightings.knows(device))
        sightings.merge(device, Self.device("5A:00:00:00:00:01", rssi: -70, uuids: [Self.service]))
        sightings.merge(device, ["RSSI": .int16(-55)])
        #expect(sightings.knows(device))
        #expect(sightings.receivers(adapterPath: Self.adapter).map(\.rssi) == [-55])
        #expect(DeviceSightings.isAdvertisement(["RSSI": .int16(-50)]) && !DeviceSightings.isAdvertisement(["Connected": .bool(true)]))
    }

    @Test func aSurveyListsTheReceiversReportedAndStopsDiscovery() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let pairing: [UInt8] = [0x03, 0x6B, 0x69, 0x74, 0, 0, 0, 0, 0, 0]
        try bluetoothd.serveDiscovery(nearby: [
            Self.path("5A:00:00:00:00:01"): Self.device("5A:00:00:00:00:01", rssi: -50, serviceData: [Self.service: pairing]),
            Self.path("00:AA:01:00:00:02"): Self.device("00:AA:01:00:00:02", type: "public", rssi: -70, uuids: [Self.service]),
            Self.path("5A:00:00:00:00:03"): Self.device("5A:00:00:00:00:03", rssi: -40, uuids: ["0000180f-0000-1000-8000-00805f9b34fb"]),
        ])
        // A receiver bluetoothd remembers from an earlier scan, not advertising now: forgotten first.
        let stale = Self.path("5A:00:00:00:00:09")
        try bluetoothd.setCachedDevice(stale, Self.device("5A:00:00:00:00:09", rssi: -30, uuids: [Self.service]))
        let connection = try await DBusConnection.connect(.address(bus.address))
        let receivers = try await ReceiverSurvey.take(adapter: "hci0", duration: .milliseconds(2_500), bus: connection)
        #expect(receivers == [
            NearbyReceiver(device: Self.path("00:AA:01:00:00:02"), address: "00:AA:01:00:00:02", addressType: "public", rssi: -70,
                           serviceData: nil, listsService: true),
            NearbyReceiver(device: Self.path("5A:00:00:00:00:01"), address: "5A:00:00:00:00:01", addressType: "random", rssi: -50,
                           serviceData: pairing, listsService: false),
        ])
        let calls = bluetoothd.calls.withLock { $0 }
        #expect(calls.first == "RemoveDevice " + stale, "\(calls)")
        #expect(calls.contains("SetDiscoveryFilter Transport"), "no UUID filter: \(calls)")
        #expect(calls.filter { $0 == "StartDiscovery" }.count >= 2, "restarted every 600 ms: \(calls)")
        #expect(calls.last == "StopDiscovery", "\(calls)")
        await connection.close()
        await bluetoothd.connection.close()
    }

    @Test func anUnknownAdapterIsNoAdapter() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let connection = try await DBusConnection.connect(.address(bus.address))
        await #expect(throws: BlueZError.noAdapter("hci7")) {
            _ = try await ReceiverSurvey.take(adapter: "hci7", duration: .seconds(1), bus: connection)
        }
        await connection.close()
        await bluetoothd.connection.close()
    }
}
