import BluetoothdStandIn
import DBus
import TestSupport
import Testing
@testable import BlueZ

/// What `doctor` learns from the bus and bluetoothd: the adapters' properties as plain values, and
/// each step's failure against a private bus with the stand-in bluetoothd.
@Suite("bluetoothd survey", .timeLimit(.minutes(2)))
struct BluetoothdSurveyTests {
    @Test func adaptersComeInPathOrderWithTheirRolesPowerAndAdvertisingInstances() {
        let objects: DBusManagedObjects = [
            "/org/bluez/hci1": [
                "org.bluez.Adapter1": ["Powered": .bool(false), "Address": .string("00:AA:01:01:00:00")],
            ],
            "/org/bluez/hci0": [
                "org.bluez.Adapter1": ["Powered": .bool(true), "Roles": .strings(["central", "peripheral"])],
                "org.bluez.LEAdvertisingManager1": ["SupportedInstances": .byte(5), "ActiveInstances": .byte(1)],
            ],
            "/org/bluez/hci0/dev_00_AA_01_01_00_00": ["org.bluez.Device1": ["Connected": .bool(true)]],
            "/": ["org.freedesktop.DBus.ObjectManager": [:]],
        ]
        let adapters = AdapterStatus.list(objects)
        #expect(adapters.map(\.path) == ["/org/bluez/hci0", "/org/bluez/hci1"])
        #expect(adapters.map(\.name) == ["hci0", "hci1"])
        #expect(adapters[0] == AdapterStatus(path: "/org/bluez/hci0", powered: true, roles: ["central", "peripheral"],
                                             advertising: AdvertisingInstances(supported: 5, active: 1)))
        // An older bluetoothd has no Roles; a controller without LE gets no advertising manager.
        #expect(adapters[1] == AdapterStatus(path: "/org/bluez/hci1", address: "00:AA:01:01:00:00", powered: false))
    }

    @Test func aBusWithTheStandInGivesItsAdapter() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        try await bluetoothd.setPowered(false)
        let survey = await BluetoothdSurvey.take(busAddress: bus.address)
        #expect(survey.busAddress == bus.address)
        #expect(survey.busFailure == nil)
        #expect(survey.bluetoothdRunning == .success(true))
        let adapters = try #require(try survey.adapters?.get())
        #expect(adapters == [AdapterStatus(
            path: FakeBluetoothd.adapter, address: "00:AA:01:00:00:00", powered: false, roles: ["central", "peripheral"],
            advertising: AdvertisingInstances(supported: 5, active: 0), addressType: "public", alias: "BlueZ 5.66", systemName: "BlueZ 5.66")])
        await bluetoothd.connection.close()
    }

    @Test func noBluetoothdOnTheBusStopsTheSurveyThere() async throws {
        let bus = try TestBus()
        defer { bus.stop() }
        let survey = await BluetoothdSurvey.take(busAddress: bus.address)
        #expect(survey.busFailure == nil)
        #expect(survey.bluetoothdRunning == .success(false))
        #expect(survey.adapters == nil)
    }

    @Test func aBusPolicyThatKeepsUsFromBluetoothdIsAccessDenied() async throws {
        let bus = try TestBus(extraRules: #"<deny send_destination="org.bluez"/>"#)
        defer { bus.stop() }
        let bluetoothd = try await FakeBluetoothd(address: bus.address)
        let survey = await BluetoothdSurvey.take(busAddress: bus.address)
        #expect(survey.bluetoothdRunning == .success(true), "NameHasOwner goes to the bus itself")
        guard case .failure(.accessDenied)? = survey.adapters else {
            Issue.record("want accessDenied, got \(String(describing: survey.adapters))")
            return
        }
        await bluetoothd.connection.close()
    }

    @Test func noBusAtTheAddressIsBusUnavailable() async throws {
        let survey = await BluetoothdSurvey.take(busAddress: "unix:path=/nonexistent/blesend-test-bus")
        guard case .busUnavailable? = survey.busFailure else {
            Issue.record("want busUnavailable, got \(String(describing: survey.busFailure))")
            return
        }
        #expect(survey.bluetoothdRunning == nil)
        #expect(survey.adapters == nil)
    }
}
