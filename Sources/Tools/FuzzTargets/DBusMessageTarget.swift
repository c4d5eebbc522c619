import BlueZ
import DBus

/// `dbus-message`: bytes in the D-Bus wire format through libdbus's own demarshaller (the real
/// parser, which validates them), then our `MessageReader` into `DBusValue`s, then the option
/// handling of the calls BlueZ makes on our GATT characteristic (`GattRequestOptions`).
///
/// Invariants:
/// - what we read matches the message's signature, and re-marshals (`MessageWriter`) without error;
/// - the re-marshalled body has exactly the original body's length (nothing dropped or added), and it
///   reads back to the same message (doubles compared bit for bit, so NaN counts as equal);
/// - GATT options: an MTU, when read, is a real ATT MTU (at least 23); a device is a valid object path;
///   WriteValue's value is the first argument's bytes.
let dbusMessageTarget = FuzzTarget(
    name: "dbus-message",
    summary: "D-Bus wire bytes through dbus_message_demarshal, MessageReader, re-marshal; GATT options",
    run: runDBusMessage,
    seeds: dbusMessageSeeds)

/// The body length from a marshalled message's fixed header (bytes 4...7, in the message's byte order).
private func bodyLength(_ message: [UInt8]) -> UInt32? {
    guard message.count >= 16 else { return nil }
    let field = message[4..<8].map(UInt32.init)
    switch message[0] {
    case UInt8(ascii: "l"): return field[0] | field[1] << 8 | field[2] << 16 | field[3] << 24
    case UInt8(ascii: "B"): return field[3] | field[2] << 8 | field[1] << 16 | field[0] << 24
    default: return nil
    }
}

/// Equality of values with doubles compared by bit pattern.
private func same(_ a: DBusValue, _ b: DBusValue) -> Bool {
    switch (a, b) {
    case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
    case let (.array(ea, xs), .array(eb, ys)): return ea == eb && sameList(xs, ys)
    case let (.structure(xs), .structure(ys)): return sameList(xs, ys)
    case let (.variant(x), .variant(y)): return same(x, y)
    case let (.dictionary(ka, va, xs), .dictionary(kb, vb, ys)):
        return ka == kb && va == vb && xs.count == ys.count
            && zip(xs, ys).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
    default: return a == b
    }
}

private func sameList(_ xs: [DBusValue], _ ys: [DBusValue]) -> Bool {
    xs.count == ys.count && zip(xs, ys).allSatisfy(same)
}

private func sameMessage(_ a: DBusMessage, _ b: DBusMessage) -> Bool {
    a.kind == b.kind && a.serial == b.serial && a.replySerial == b.replySerial && a.path == b.path
        && a.interface == b.interface && a.member == b.member && a.errorName == b.errorName
        && a.sender == b.sender && a.destination == b.destination && a.signature == b.signature
        && a.noReplyExpected == b.noReplyExpected && sameList(a.arguments, b.arguments)
}

private func checkOptions(_ options: GattRequestOptions) {
    if let mtu = options.mtu { require(mtu >= 23, "options gave MTU \(mtu); ATT's minimum is 23") }
    if let device = options.device { require(DBusNames.isValidPath(device), "device \(device) is not an object path") }
}

private func runDBusMessage(_ bytes: [UInt8]) {
    guard let message = try? DBusMessage(marshalled: bytes) else { return }
    require(message.arguments.map(\.signature).joined() == message.signature,
            "read \(message.arguments.map(\.signature).joined()) from a message with signature \(message.signature)")
    let again: [UInt8]
    do {
        again = try message.marshalled()
    } catch {
        fatalError("fuzz invariant violated: a message we read does not marshal again: \(error)")
    }
    require(bodyLength(again) == bodyLength(bytes), "re-marshalled body is \(String(describing: bodyLength(again))) bytes, was \(String(describing: bodyLength(bytes)))")
    guard let reread = try? DBusMessage(marshalled: again) else {
        fatalError("fuzz invariant violated: a message we marshalled does not demarshal")
    }
    require(sameMessage(message, reread), "the message changed in a marshal round trip")
    require((try? reread.marshalled()) == again, "marshalling is not deterministic")

    checkOptions(GattRequestOptions.acquire(message))
    if let (value, options) = try? GattRequestOptions.writeValue(message) {
        require(message.arguments.first?.bytes == value, "WriteValue's value is not the first argument")
        checkOptions(options)
    }
}

// MARK: - Seeds

private let charPath = "/org/blesend/app/service0/char0"
private let devicePath = "/org/bluez/hci0/dev_00_AA_01_00_00_01"
private let characteristic = "org.bluez.GattCharacteristic1"

private func call(_ member: String, _ arguments: [DBusValue], serial: UInt32) -> DBusMessage {
    DBusMessage(kind: .methodCall, serial: serial, path: charPath, interface: characteristic, member: member,
                sender: ":1.4", destination: ":1.9", arguments: arguments)
}

private func dbusMessageSeeds() -> [FuzzSeed] {
    let bluezOptions: [String: DBusValue] = [
        "device": .objectPath(devicePath), "link": .string("LE"), "mtu": .uint16(517),
    ]
    var writeOptions = bluezOptions
    writeOptions["offset"] = .uint16(0)
    writeOptions["type"] = .string("command")
    var smallMTU = bluezOptions
    smallMTU["mtu"] = .uint16(48)

    let managedObjects = DBusValue.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [
        DBusDictEntry(key: .objectPath(devicePath), value: .stringDictionary(valueSignature: "a{sv}", [
            "org.bluez.Device1": .properties([
                "Address": .string("00:AA:01:00:00:01"), "Connected": .bool(true), "RSSI": .int16(-60),
                "UUIDs": .strings(["6e400001-b5a3-f393-e0a9-e50e24dcca9e"]),
                "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [
                    DBusDictEntry(key: .uint16(0x004C), value: .variant(.bytes([1, 2, 3]))),
                ]),
            ]),
        ])),
    ])
    let everyType = DBusValue.structure([
        .byte(1), .bool(true), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7),
        .double(.nan), .string("s"), .objectPath("/o"), .signature("a{sv}"),
        .array(elementSignature: "(iv)", [.structure([.int32(1), .variant(.variant(.double(-0.0)))])]),
        .array(elementSignature: "aay", [.array(elementSignature: "ay", [.bytes([]), .bytes([0xFF])])]),
    ])

    let messages: [(String, DBusMessage)] = [
        ("write-value", call("WriteValue", [.bytes([0x40, 0x00, 0x01, 0x02, 0x03]), .properties(writeOptions)], serial: 10)),
        ("acquire-write", call("AcquireWrite", [.properties(bluezOptions)], serial: 11)),
        ("acquire-notify-small-mtu", call("AcquireNotify", [.properties(smallMTU)], serial: 12)),
        ("read-value", call("ReadValue", [.properties(["offset": .uint16(0), "device": .objectPath(devicePath)])], serial: 13)),
        ("start-notify", call("StartNotify", [], serial: 14)),
        ("properties-changed", DBusMessage(
            kind: .signal, serial: 15, path: devicePath, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", sender: ":1.4",
            arguments: [.string("org.bluez.Device1"), .properties(["Connected": .bool(false)]), .strings([])])),
        ("managed-objects-reply", DBusMessage(kind: .methodReturn, serial: 16, replySerial: 3, sender: ":1.4",
                                             destination: ":1.9", arguments: [managedObjects])),
        ("error-reply", DBusMessage(kind: .error, serial: 17, replySerial: 4, errorName: "org.bluez.Error.Failed",
                                    sender: ":1.4", destination: ":1.9", arguments: [.string("Operation failed")])),
        ("every-type", DBusMessage(kind: .signal, serial: 18, path: "/", interface: "org.example.Fuzz", member: "All",
                                   arguments: [everyType, .variant(everyType)])),
    ]
    return messages.compactMap { name, message in
        (try? message.marshalled()).map { FuzzSeed(name, $0) }
    }
}
