/// UUIDs (docs/protocol.md §1) and BlueZ interface names.
public enum BlesendGATT {
    public static let serviceUUID = "6f3c0001-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let transferCharacteristicUUID = "6f3c0002-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let versionCharacteristicUUID = "6f3c0003-8c2e-4b6a-9d2f-7a1e5b0c4d10"
    public static let protocolVersion: UInt8 = 1
}

enum BlueZ {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattManager = "org.bluez.GattManager1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let advertisement = "org.bluez.LEAdvertisement1"
}
