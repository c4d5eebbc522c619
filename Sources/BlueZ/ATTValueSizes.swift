// How much of an ATT MTU one datagram of the BlueZ transport carries (`GattLink`'s sizes).

/// The most a BlueZ 5.66 GATT server accepts in one write-without-response value, whatever the MTU
/// (larger values are dropped silently; see docs/protocol.md).
public let blueZMaxValueLength = 510

/// Usable datagram size for an ATT MTU in the sender-to-receiver direction (Write Command):
/// `min(mtu - 3, 510)`.
public func attPayloadSize(mtu: Int) -> Int {
    max(0, min(mtu - 3, blueZMaxValueLength))
}

/// Usable datagram size for notifications (receiver to sender): `min(mtu - 5, 510)`. Between two
/// BlueZ 5.66 daemons a notification value of MTU-4 or MTU-3 bytes is lost silently: BlueZ sends
/// notifications as Multiple Handle Value Notifications, whose 4-byte length and handle prefix
/// leaves `mtu - 5` bytes (measured in the lab at MTU 48: 43 bytes arrive, 44 and 45 do not).
public func attNotificationSize(mtu: Int) -> Int {
    max(0, min(mtu - 5, blueZMaxValueLength))
}
