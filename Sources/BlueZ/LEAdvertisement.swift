/// An LE advertisement as plain values (BlueZ's doc/org.bluez.LEAdvertisement.rst); what is not
/// set is left out of the advertising data. `LEAdvertisementExport` serves it.
struct LEAdvertisement: Equatable, Sendable {
    enum Kind: String, Equatable, Sendable {
        /// Connectable.
        case peripheral
        /// Not connectable.
        case broadcast
    }

    var kind: Kind
    var serviceUUIDs: [String]
    /// General discoverable, whatever the adapter's own Discoverable setting (nil: the adapter's).
    var discoverable: Bool?
    var localName: String?
    /// Service data by service UUID (BlueZ puts it in the advertising data, 13 bytes at most each).
    var serviceData: [String: [UInt8]] = [:]
}
