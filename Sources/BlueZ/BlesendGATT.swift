/// What a receiver serves: the UUIDs (docs/protocol.md §1), the GATT application and the
/// advertisement, as values.
public enum BlesendGATT {
    public static let serviceUUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let transferCharacteristicUUID = "6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let versionCharacteristicUUID = "6f3c0003-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let protocolVersion: UInt8 = 1

    /// One primary service: the transfer characteristic (the sender writes without response and
    /// subscribes to notifications, both through acquired sockets where BlueZ offers them) and,
    /// unless left out, the version characteristic, read-only.
    static func application(versionCharacteristic: Bool) -> GattApplication {
        var characteristics = [
            GattCharacteristic(
                uuid: transferCharacteristicUUID, flags: [.writeWithoutResponse, .notify],
                acquiresWrite: true, acquiresNotify: true, value: .handled),
        ]
        if versionCharacteristic {
            characteristics.append(GattCharacteristic(uuid: versionCharacteristicUUID, flags: [.read], value: .constant([protocolVersion])))
        }
        return GattApplication(services: [GattService(uuid: serviceUUID, primary: true, characteristics: characteristics)])
    }

    /// Connectable and discoverable, with the service UUID. `localName` is off by default: no stable
    /// personal identifier on the air.
    static func advertisement(localName: String?) -> LEAdvertisement {
        LEAdvertisement(kind: .peripheral, serviceUUIDs: [serviceUUID], discoverable: true, localName: localName)
    }
}
