import DBus

/// What a receiver serves: the UUIDs (docs/protocol.md §1), the GATT application and the
/// advertisement, as values.
public enum BlesendGATT {
    public static let serviceUUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let transferCharacteristicUUID = "6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let versionCharacteristicUUID = "6f3c0003-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    /// Where a peripheral publishes the PSM of its L2CAP channel: a little-endian `u16`, read-only,
    /// inside the service the channel belongs to. Apple's UUID (`CBUUIDL2CAPPSMCharacteristicString`),
    /// so that other stacks find it where they look for it.
    public static let psmCharacteristicUUID = "abdd3056-28fa-441d-a470-55a75a52553a"
    /// Where a receiver lists the transfer extensions it grants (docs/protocol.md §8): a big-endian
    /// `u32` bit set, read-only; absent on a receiver that grants none.
    public static let extensionsCharacteristicUUID = "6f3c0004-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let protocolVersion: UInt8 = 1

    /// One primary service: the transfer characteristic (the sender writes without response and
    /// subscribes to notifications, both through acquired sockets where BlueZ offers them); unless
    /// left out, the version characteristic, read-only; and with an L2CAP channel listening, the
    /// PSM characteristic, read-only (docs/protocol.md §1.2); with `extensions` (a bit set, not 0),
    /// the extensions characteristic, read-only (§8).
    static func application(versionCharacteristic: Bool, psm: UInt16? = nil, extensions: UInt32 = 0) -> GattApplication {
        var characteristics = [
            GattCharacteristic(
                uuid: transferCharacteristicUUID, flags: [.writeWithoutResponse, .notify],
                acquiresWrite: true, acquiresNotify: true, value: .handled),
        ]
        if versionCharacteristic {
            characteristics.append(GattCharacteristic(uuid: versionCharacteristicUUID, flags: [.read], value: .constant([protocolVersion])))
        }
        if let psm {
            characteristics.append(GattCharacteristic(uuid: psmCharacteristicUUID, flags: [.read], value: .constant(psmValue(psm))))
        }
        if extensions != 0 {
            characteristics.append(GattCharacteristic(uuid: extensionsCharacteristicUUID, flags: [.read], value: .constant(extensionsValue(extensions))))
        }
        return GattApplication(services: [GattService(uuid: serviceUUID, primary: true, characteristics: characteristics)])
    }

    /// The PSM characteristic's value: the PSM, little-endian.
    static func psmValue(_ psm: UInt16) -> [UInt8] { [UInt8(psm & 0xFF), UInt8(psm >> 8)] }

    /// The PSM in a PSM characteristic's value; nil unless it is 2 bytes naming an LE dynamic PSM
    /// (0x80–0xFF), the only ones an unprivileged receiver listens on.
    static func psm(fromValue value: [UInt8]) -> UInt16? {
        guard value.count == 2 else { return nil }
        let psm = UInt16(value[0]) | UInt16(value[1]) << 8
        return (0x80...0xFF).contains(psm) ? psm : nil
    }

    /// The extensions characteristic's value: the bit set, big-endian.
    static func extensionsValue(_ extensions: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: extensions >> (24 - 8 * $0)) } }

    /// The bit set in an extensions characteristic's value; 0 (none) unless it is 4 bytes.
    static func extensions(fromValue value: [UInt8]?) -> UInt32 {
        guard let value, value.count == 4 else { return 0 }
        return value.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Connectable and discoverable, with the service UUID. `localName` is off by default: no stable
    /// personal identifier on the air. With `discovery` (private discovery, docs/protocol.md §1.1),
    /// the data goes as service data under the service UUID instead of the UUID list: BlueZ 5.66
    /// fits Flags and one of the two in a legacy advertisement, not both.
    static func advertisement(localName: String?, discovery: [UInt8]? = nil) -> LEAdvertisement {
        guard let discovery else {
            return LEAdvertisement(kind: .peripheral, serviceUUIDs: [serviceUUID], discoverable: true, localName: localName)
        }
        return LEAdvertisement(kind: .peripheral, serviceUUIDs: [], discoverable: true, localName: localName,
                               serviceData: [serviceUUID: discovery])
    }

    /// The private-discovery service data in a device's `ServiceData` property, if it has any.
    static func discoveryData(_ props: [String: DBusValue]) -> [UInt8]? {
        guard let data = props["ServiceData"]?.properties else { return nil }
        return data.first { $0.key.lowercased() == serviceUUID }?.value.bytes
    }
}
