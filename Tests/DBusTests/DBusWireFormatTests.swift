import Testing
@testable import DBus

/// Messages to and from the wire format through libdbus (used by the dbus-message fuzz target).
@Suite("D-Bus wire format")
struct DBusWireFormatTests {
    @Test func aMessageRoundTrips() throws {
        let message = DBusMessage(
            kind: .methodCall, serial: 7, path: "/org/blesend/app/service0/char0",
            interface: "org.bluez.GattCharacteristic1", member: "WriteValue", sender: ":1.4", destination: ":1.9",
            arguments: [.bytes([1, 2, 3]), .properties(["mtu": .uint16(517), "device": .objectPath("/org/bluez/hci0")])])
        let bytes = try message.marshalled()
        let again = try DBusMessage(marshalled: bytes)
        #expect(again == message)
        #expect(try again.marshalled() == bytes)
    }

    @Test func garbageIsMalformed() {
        #expect(throws: DBusError.self) { try DBusMessage(marshalled: []) }
        #expect(throws: DBusError.self) { try DBusMessage(marshalled: Array("not a message at all".utf8)) }
    }

    @Test func unmarshallableMessagesAreRefusedBeforeLibdbusSeesThem() {
        #expect(throws: DBusError.invalidValue(DBusProblem(.zeroSerial))) {
            try DBusMessage(kind: .signal, serial: 0, path: "/", interface: "a.b", member: "C").marshalled()
        }
        #expect(throws: DBusError.invalidName(kind: .objectPath, value: "no/slash")) {
            try DBusMessage(kind: .signal, serial: 1, path: "no/slash", interface: "a.b", member: "C").marshalled()
        }
        #expect(throws: DBusError.unixFDNotSupported) {
            try DBusMessage(kind: .signal, serial: 1, path: "/", interface: "a.b", member: "C", arguments: [.unixFD(0)]).marshalled()
        }
    }
}
