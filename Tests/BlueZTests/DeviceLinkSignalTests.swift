import DBus
import Testing
@testable import BlueZ

/// A link is heard of whichever way bluetoothd says it: a device exported already connected
/// (`InterfacesAdded`, no `PropertiesChanged` after: the stranger whose bare link the receiver
/// never ended, issue 30 run 4) is a link up; a device removed is a link down; anything else under
/// another adapter, on another interface, or not connected says nothing.
@Suite("Device link signals")
struct DeviceLinkSignalTests {
    let adapter = "/org/bluez/hci0"

    @Test(arguments: [
        (DBusObjectManagerEvent.added(path: "/org/bluez/hci0/dev_S", interfaces: [BlueZ.device: ["Connected": .bool(true)]]),
         DeviceLinkSignal(device: "/org/bluez/hci0/dev_S", up: true)),
        (.added(path: "/org/bluez/hci0/dev_S", interfaces: [BlueZ.device: ["Connected": .bool(false)]]), nil),
        (.added(path: "/org/bluez/hci0/dev_S", interfaces: [BlueZ.device: ["Paired": .bool(true)]]), nil),
        (.added(path: "/org/bluez/hci0/dev_S/service0001", interfaces: ["org.bluez.GattService1": ["Primary": .bool(true)]]), nil),
        (.added(path: "/org/bluez/hci1/dev_S", interfaces: [BlueZ.device: ["Connected": .bool(true)]]), nil),
        (.added(path: "/org/bluez/hci01/dev_S", interfaces: [BlueZ.device: ["Connected": .bool(true)]]), nil),
        (.removed(path: "/org/bluez/hci0/dev_S", interfaces: [BlueZ.device]), DeviceLinkSignal(device: "/org/bluez/hci0/dev_S", up: false)),
        (.removed(path: "/org/bluez/hci0/dev_S/service0001", interfaces: ["org.bluez.GattService1"]), nil),
        (.removed(path: "/org/bluez/hci1/dev_S", interfaces: [BlueZ.device]), nil),
    ] as [(DBusObjectManagerEvent, DeviceLinkSignal?)])
    func objectManagerEvents(event: DBusObjectManagerEvent, expected: DeviceLinkSignal?) {
        #expect(DeviceLinkSignal(event, adapterPath: adapter) == expected)
    }
}
