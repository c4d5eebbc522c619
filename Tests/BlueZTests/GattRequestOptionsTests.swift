import Testing
@testable import BlueZ
import DBus

/// The options BlueZ passes with calls on our characteristic, read by a pure function.
@Suite("GATT request options")
struct GattRequestOptionsTests {
    let device = "/org/bluez/hci0/dev_00_AA_01_00_00_01"

    func call(_ member: String, _ arguments: [DBusValue]) -> DBusMessage {
        DBusMessage(kind: .methodCall, serial: 1, path: "/org/blesend/app/service0/char0",
                    interface: "org.bluez.GattCharacteristic1", member: member, arguments: arguments)
    }

    @Test func acquireReadsDeviceAndMTU() {
        let options = GattRequestOptions.acquire(call("AcquireWrite", [
            .properties(["device": .objectPath(device), "mtu": .uint16(517), "link": .string("LE")]),
        ]))
        #expect(options == GattRequestOptions(device: device, mtu: 517))
    }

    @Test func missingOrMalformedOptionsGiveNothing() {
        #expect(GattRequestOptions.acquire(call("AcquireNotify", [])) == GattRequestOptions())
        #expect(GattRequestOptions.acquire(call("AcquireNotify", [.string("not a dictionary")])) == GattRequestOptions())
        // Entries of the wrong type are ignored, not guessed at.
        let wrongTypes = GattRequestOptions.acquire(call("AcquireWrite", [
            .properties(["device": .string(device), "mtu": .uint32(185)]),
        ]))
        #expect(wrongTypes == GattRequestOptions())
    }

    /// Found by the dbus-message fuzz target (Tests/Fuzz/crashers/dbus-message): an "mtu" of 0 became
    /// the MTU of a new link, whose datagram size (0) made every send fail.
    @Test func anMTUBelowTheATTMinimumIsIgnored() throws {
        for mtu: UInt16 in [0, 1, 22] {
            #expect(GattRequestOptions.acquire(call("AcquireWrite", [.properties(["mtu": .uint16(mtu)])])).mtu == nil)
            let (_, options) = try GattRequestOptions.writeValue(call("WriteValue", [.bytes([1]), .properties(["mtu": .uint16(mtu)])]))
            #expect(options.mtu == nil)
        }
        #expect(GattRequestOptions.acquire(call("AcquireWrite", [.properties(["mtu": .uint16(23)])])).mtu == 23)
    }

    @Test func writeValueReadsTheValueAndTheOptions() throws {
        let (value, options) = try GattRequestOptions.writeValue(call("WriteValue", [
            .bytes([1, 2, 3]), .properties(["device": .objectPath(device), "mtu": .uint16(48), "offset": .uint16(0)]),
        ]))
        #expect(value == [1, 2, 3])
        #expect(options == GattRequestOptions(device: device, mtu: 48))
        let (bare, none) = try GattRequestOptions.writeValue(call("WriteValue", [.bytes([9])]))
        #expect(bare == [9] && none == GattRequestOptions())
    }

    @Test func writeValueWithoutBytesIsInvalidArgs() {
        #expect(throws: DBusErrorReply.self) { try GattRequestOptions.writeValue(call("WriteValue", [])) }
        #expect(throws: DBusErrorReply.invalidArgs("expected ay")) {
            try GattRequestOptions.writeValue(call("WriteValue", [.string("x")]))
        }
    }
}
