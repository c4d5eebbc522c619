import DBus

/// What a survey learnt of each device bluetoothd reported while it ran: the `Device1`
/// properties, merged as they came (`InterfacesAdded` gives them all, `PropertiesChanged` the
/// changes). Invalidated properties are not dropped: bluetoothd invalidates `RSSI` when a scan
/// stops, and the survey restarts its scan every `GattCentral.scanRestart`, so the last value
/// reported is the one to show.
struct DeviceSightings: Sendable {
    private(set) var properties: [String: [String: DBusValue]] = [:]

    /// Whether the device has been reported during the survey.
    func knows(_ device: String) -> Bool { properties[device] != nil }

    /// Merges what bluetoothd reported of `device` (newer values win).
    mutating func merge(_ device: String, _ props: [String: DBusValue]) {
        properties[device, default: [:]].merge(props) { _, new in new }
    }

    /// Whether a change to a device the survey has not seen yet comes from an advertisement (a
    /// device bluetoothd already had, reported again), rather than from a link (`Connected`,
    /// `ServicesResolved`) of a device that may not be advertising at all.
    static func isAdvertisement(_ changed: [String: DBusValue]) -> Bool {
        changed["RSSI"] != nil || changed["UUIDs"] != nil || changed["ServiceData"] != nil
    }

    /// The devices of `adapterPath` that advertised the transfer service, in path order.
    func receivers(adapterPath: String) -> [NearbyReceiver] {
        properties.keys.sorted().compactMap { device in
            properties[device].flatMap { NearbyReceiver(device: device, properties: $0, adapterPath: adapterPath) }
        }
    }
}
