/// A GATT application as plain values, the way bluer declares one
/// (`Application { services: [Service { uuid, primary, characteristics: [...] }] }`): what we ask
/// bluetoothd to serve, and nothing of how. `GattApplicationObjects` lays it out as D-Bus objects,
/// `GattApplicationExport` serves them.
struct GattApplication: Equatable, Sendable {
    var services: [GattService]
}

/// One service of a `GattApplication`.
struct GattService: Equatable, Sendable {
    var uuid: String
    /// A primary service (false: secondary).
    var primary: Bool
    var characteristics: [GattCharacteristic]
}

/// One characteristic of a `GattService`.
struct GattCharacteristic: Equatable, Sendable {
    /// The characteristic properties a peer sees (BlueZ's `Flags` strings), in the order declared.
    enum Flag: String, Equatable, Sendable {
        case read
        case writeWithoutResponse = "write-without-response"
        case notify
    }

    /// Where the characteristic's value comes from.
    enum Value: Equatable, Sendable {
        /// The same bytes for every read.
        case constant([UInt8])
        /// A `GattCharacteristicHandler` answers reads, writes, subscriptions and socket requests.
        case handled
    }

    var uuid: String
    var flags: [Flag]
    /// Whether bluetoothd may hand the peer's writes over through a socket (`AcquireWrite`).
    var acquiresWrite = false
    /// Whether bluetoothd may take our notifications through a socket (`AcquireNotify`).
    var acquiresNotify = false
    var value: Value
}
