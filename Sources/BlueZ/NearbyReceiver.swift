import DBus

/// A device that advertised the transfer service during a `ReceiverSurvey`, as plain values: what
/// its advertisement said, read without connecting (`blesend scan`).
public struct NearbyReceiver: Equatable, Sendable {
    /// Its BlueZ object path (`/org/bluez/hci0/dev_…`).
    public let device: String
    /// `Device1.Address`: `AA:BB:CC:DD:EE:FF`.
    public let address: String
    /// `Device1.AddressType`: `public` or `random`; nil when bluetoothd did not say.
    public let addressType: String?
    /// The last RSSI reported during the survey, in dBm; nil when the adapter reported none.
    public let rssi: Int16?
    /// The service data under the transfer service UUID (private discovery, pairing); nil if none.
    public let serviceData: [UInt8]?
    /// Whether the advertised UUID list holds the transfer service UUID.
    public let listsService: Bool

    public init(device: String, address: String, addressType: String?, rssi: Int16?, serviceData: [UInt8]?, listsService: Bool) {
        self.device = device
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.serviceData = serviceData
        self.listsService = listsService
    }

    /// The receiver a device's `Device1` properties describe: nil unless the device belongs to
    /// `adapterPath` and advertises the transfer service (in its UUID list or as service data).
    init?(device: String, properties props: [String: DBusValue], adapterPath: String) {
        guard props["Adapter"]?.objectPath == adapterPath else { return nil }
        let data = BlesendGATT.discoveryData(props)
        let lists = (props["UUIDs"]?.strings ?? []).contains { $0.lowercased() == BlesendGATT.serviceUUID }
        guard data != nil || lists else { return nil }
        self.init(device: device, address: props["Address"]?.string ?? Self.address(fromPath: device),
                  addressType: props["AddressType"]?.string, rssi: props["RSSI"]?.int16, serviceData: data, listsService: lists)
    }

    /// The address in a device path's last part (`dev_AA_BB_CC_DD_EE_FF`), for a device whose
    /// `Address` is missing (bluetoothd always sends it; this only keeps a row from being blank).
    static func address(fromPath path: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? path
        return last.hasPrefix("dev_") ? String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 }) : last
    }
}
