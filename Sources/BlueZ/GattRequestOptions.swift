import DBus

/// What the peripheral reads from the options BlueZ passes with a call on our characteristic
/// (`org.bluez.GattCharacteristic1`): an `a{sv}` that may hold "device" (o), "mtu" (q), "link" (s),
/// "offset" (q) and others. Only the device and the MTU matter to us; other keys, and entries of an
/// unexpected type, are ignored. A pure function of the call's arguments (fuzzed in FuzzTargets).
package struct GattRequestOptions: Equatable, Sendable {
    /// The peer's object path.
    package var device: String?
    /// The ATT MTU BlueZ negotiated; never below `minimumMTU`.
    package var mtu: Int?

    /// ATT's smallest MTU on LE. A smaller "mtu" option is not an MTU and is ignored: it would give
    /// the link a datagram size below the smallest frame, so every send would fail.
    package static let minimumMTU = 23

    package init(device: String? = nil, mtu: Int? = nil) {
        self.device = device
        self.mtu = mtu
    }

    /// Reads an options dictionary; a missing one, or one that is not a string-keyed dictionary,
    /// gives no options.
    package init(_ options: DBusValue?) {
        let entries = options?.properties ?? [:]
        device = entries["device"]?.objectPath
        mtu = entries["mtu"]?.uint16.map(Int.init).flatMap { $0 >= Self.minimumMTU ? $0 : nil }
    }

    /// `AcquireWrite(a{sv} options)` and `AcquireNotify(a{sv} options)`.
    package static func acquire(_ call: DBusMessage) -> GattRequestOptions {
        GattRequestOptions(call.arguments.first)
    }

    /// `WriteValue(ay value, a{sv} options)`: the value and the options.
    package static func writeValue(_ call: DBusMessage) throws(DBusErrorReply) -> (value: [UInt8], options: GattRequestOptions) {
        guard let value = try call.argument(0).bytes else { throw DBusErrorReply.invalidArgs("expected ay") }
        let options = call.arguments.count > 1 ? GattRequestOptions(call.arguments[1]) : GattRequestOptions()
        return (value, options)
    }
}
