import Testing
@testable import BlueZ

/// What one datagram may carry at an ATT MTU (lab/README.md, "510-byte cap" and "Notifications
/// carry 2 bytes less").
@Test func attValueSizes() {
    #expect(blueZMaxValueLength == 510)
    #expect(attPayloadSize(mtu: 23) == 20)
    #expect(attPayloadSize(mtu: 48) == 45)
    #expect(attPayloadSize(mtu: 513) == 510)
    #expect(attPayloadSize(mtu: 517) == 510)
    #expect(attPayloadSize(mtu: 0) == 0)
    #expect(attNotificationSize(mtu: 23) == 18)
    #expect(attNotificationSize(mtu: 48) == 43)
    #expect(attNotificationSize(mtu: 517) == 510)
    #expect(attNotificationSize(mtu: 4) == 0)
}
