import DBus
import Pipeline
import Testing
@testable import BlueZ

/// When the private-discovery advertisement (and its salt) is registered afresh: a virtual clock
/// and a table of who is connected.
@Suite("advertisement rotation")
struct AdvertisementRotationTests {
    typealias Device = AdvertisementRotation.ConnectedDevice

    static func at(_ seconds: Int) -> Instant { Instant.zero.advanced(by: .seconds(seconds)) }

    static let sender = Device(path: "/org/bluez/hci0/dev_S", linkedToUs: true, paired: false)
    static let keyboard = Device(path: "/org/bluez/hci0/dev_K", linkedToUs: false, paired: true)
    static let stranger = Device(path: "/org/bluez/hci0/dev_X", linkedToUs: false, paired: false)

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// Each step: the time in seconds, who is connected then (nil: bluetoothd did not answer),
        /// and what the policy must say.
        let steps: [(Int, [Device]?, AdvertisementRotation.Decision)]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "nobody connected: a new salt every 600 s", steps: [
            (1, [], .wait(until: at(600))),
            (600, [], .registerAgain),
        ]),
        Case(name: "a paired keyboard connected all along does not hold the salt", steps: [
            (600, [keyboard], .registerAgain),
        ]),
        Case(name: "our sender's link holds it, and it turns 5 s after the link ends", steps: [
            (600, [sender], .wait(until: at(605))),
            (605, [sender, keyboard], .wait(until: at(610))),
            (610, [keyboard], .registerAgain),
        ]),
        Case(name: "an unpaired device that just connected may be a sender before its first write", steps: [
            (600, [stranger], .wait(until: at(605))),
            (625, [stranger], .wait(until: at(630))),
            (630, [stranger], .registerAgain),
        ]),
        Case(name: "one that connected long before the turn was due is not waited for again", steps: [
            (100, [stranger], .wait(until: at(600))),
            (600, [stranger], .registerAgain),
        ]),
        Case(name: "one that left and came back is new again", steps: [
            (100, [stranger], .wait(until: at(600))),
            (590, [], .wait(until: at(600))),
            (600, [stranger], .wait(until: at(605))),
        ]),
        Case(name: "bluetoothd not answering holds the turn", steps: [
            (600, nil, .wait(until: at(605))),
            (605, [], .registerAgain),
        ]),
    ]

    @Test(arguments: cases)
    func decides(_ test: Case) throws {
        var policy = try #require(AdvertisementRotation(registeredAt: .zero))
        for (seconds, connected, expected) in test.steps {
            #expect(policy.decide(now: Self.at(seconds), connected: connected) == expected, "at \(seconds) s")
        }
    }

    @Test func aRegistrationStartsTheNextPeriod() throws {
        var policy = try #require(AdvertisementRotation(registeredAt: .zero))
        #expect(policy.decide(now: Self.at(600), connected: []) == .registerAgain)
        policy.registered(at: Self.at(600))
        #expect(policy.decide(now: Self.at(601), connected: []) == .wait(until: Self.at(1200)))
        // bluetoothd came back and the advertisement was registered afresh in between.
        policy.registered(at: Self.at(900))
        #expect(policy.decide(now: Self.at(1200), connected: []) == .wait(until: Self.at(1500)))
    }

    /// A salt must be replaced before the kernel gives its instance a new address, even when a
    /// just-connected device holds the turn for the whole grace.
    @Test func thePeriodAndTheGraceStayUnderTheAddressTimeout() {
        #expect(AdvertisementRotation(registeredAt: .zero) != nil)
        #expect(AdvertisementRotation.defaultPeriod + AdvertisementRotation.defaultPendingGrace < AdvertisementRotation.kernelAddressTimeout)
        #expect(AdvertisementRotation(registeredAt: .zero, period: .seconds(900)) == nil)
        #expect(AdvertisementRotation(registeredAt: .zero, period: .seconds(870)) == nil)
        #expect(AdvertisementRotation(registeredAt: .zero, period: .seconds(869)) != nil)
        #expect(AdvertisementRotation(registeredAt: .zero, period: .zero) == nil)
    }

    @Test func devicesComeFromBluetoothdsObjectsOnOurAdapterOnly() {
        let objects: DBusManagedObjects = [
            "/org/bluez/hci0/dev_K": [BlueZ.device: ["Adapter": .objectPath("/org/bluez/hci0"), "Connected": .bool(true), "Paired": .bool(true)]],
            "/org/bluez/hci0/dev_B": [BlueZ.device: ["Adapter": .objectPath("/org/bluez/hci0"), "Connected": .bool(true), "Bonded": .bool(true)]],
            "/org/bluez/hci0/dev_S": [BlueZ.device: ["Adapter": .objectPath("/org/bluez/hci0"), "Connected": .bool(true)]],
            "/org/bluez/hci0/dev_Q": [BlueZ.device: ["Adapter": .objectPath("/org/bluez/hci0"), "Connected": .bool(false)]],
            "/org/bluez/hci1/dev_O": [BlueZ.device: ["Adapter": .objectPath("/org/bluez/hci1"), "Connected": .bool(true)]],
            "/org/bluez/hci0": [BlueZ.adapter: ["Powered": .bool(true)]],
        ]
        let devices = AdvertisementRotation.connectedDevices(objects, adapterPath: "/org/bluez/hci0", ours: ["/org/bluez/hci0/dev_S"])
        #expect(devices == [
            Device(path: "/org/bluez/hci0/dev_B", linkedToUs: false, paired: true),
            Device(path: "/org/bluez/hci0/dev_K", linkedToUs: false, paired: true),
            Device(path: "/org/bluez/hci0/dev_S", linkedToUs: true, paired: false),
        ])
    }
}
