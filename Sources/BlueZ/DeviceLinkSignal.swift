import DBus

/// A device's link under one adapter coming up or going down, as bluetoothd's signals tell it.
///
/// `Connected` changing on `Device1` (`PropertiesChanged`) is the usual word. A device bluetoothd
/// had no object for (a stranger this adapter never scanned) may instead be exported already
/// connected, its `InterfacesAdded` carrying `Connected` true, with no `PropertiesChanged` after:
/// seen in the lab under load on both images, where the receiver never heard of a stranger's bare
/// link and so never ended it (issue 30, run 4). A device object removed has no link left.
struct DeviceLinkSignal: Equatable, Sendable {
    let device: String
    let up: Bool

    init(device: String, up: Bool) {
        self.device = device
        self.up = up
    }

    /// From `PropertiesChanged` on a device: nil unless `Connected` is among the changes.
    init?(_ change: DBusPropertiesChanged) {
        guard change.interface == BlueZ.device, let connected = change.changed["Connected"]?.bool else { return nil }
        self.init(device: change.path, up: connected)
    }

    /// From `InterfacesAdded` / `InterfacesRemoved`: a device under `adapterPath` exported
    /// connected, or its `Device1` removed; nil for anything else.
    init?(_ event: DBusObjectManagerEvent, adapterPath: String) {
        switch event {
        case .added(let path, let interfaces):
            guard path.hasPrefix(adapterPath + "/"), interfaces[BlueZ.device]?["Connected"]?.bool == true else { return nil }
            self.init(device: path, up: true)
        case .removed(let path, let interfaces):
            guard path.hasPrefix(adapterPath + "/"), interfaces.contains(BlueZ.device) else { return nil }
            self.init(device: path, up: false)
        }
    }
}
