import L2CAP
import Pipeline
import Testing
@testable import BlueZ

/// What a receiver publishes for its L2CAP channel, and how a sender reads it (docs/protocol.md §1.2).
@Suite("L2CAP in the GATT service")
struct L2CAPServiceTests {
    @Test func psmCharacteristicIsLittleEndianAndReadOnly() throws {
        #expect(BlesendGATT.psmValue(0x0081) == [0x81, 0x00])
        let application = BlesendGATT.application(versionCharacteristic: true, psm: 0x0085)
        let service = try #require(application.services.first)
        let psm = try #require(service.characteristics.first { $0.uuid == BlesendGATT.psmCharacteristicUUID })
        #expect(psm.flags == [.read])
        #expect(psm.value == .constant([0x85, 0x00]))
        // Without a channel there is no PSM characteristic: senders use GATT.
        let gattOnly = BlesendGATT.application(versionCharacteristic: true)
        #expect(gattOnly.services.first?.characteristics.contains { $0.uuid == BlesendGATT.psmCharacteristicUUID } == false)
    }

    @Test func onlyLEDynamicPSMsAreAccepted() {
        #expect(BlesendGATT.psm(fromValue: [0x80, 0x00]) == 0x80)
        #expect(BlesendGATT.psm(fromValue: [0xFF, 0x00]) == 0xFF)
        #expect(BlesendGATT.psm(fromValue: [0x7F, 0x00]) == nil)   // fixed, SIG-assigned range
        #expect(BlesendGATT.psm(fromValue: [0x00, 0x01]) == nil)
        #expect(BlesendGATT.psm(fromValue: [0x81]) == nil)
        #expect(BlesendGATT.psm(fromValue: [0x81, 0x00, 0x00]) == nil)
        #expect(BlesendGATT.psm(fromValue: []) == nil)
    }

    @Test func appleUUIDInBlueZSpelling() {
        #expect(BlesendGATT.psmCharacteristicUUID == "ABDD3056-28FA-441D-A470-55A75A52553A".lowercased())
    }

    @Test func devicePathFromAddress() throws {
        let address = try #require(BluetoothAddress("00:AA:01:02:0B:FF", kind: .public))
        #expect(BlueZ.devicePath(adapterPath: "/org/bluez/hci0", address: address) == "/org/bluez/hci0/dev_00_AA_01_02_0B_FF")
    }

    @Test func transportDescriptions() {
        let gatt = TransportDescription(kind: .gatt, sendSize: 510, receiveSize: 510, attMTU: 517)
        #expect(gatt.description == "GATT, ATT MTU 517 (510-byte values)")
        #expect(gatt.shortLabel == "GATT mtu 517")
        let channel = TransportDescription(kind: .l2cap, sendSize: 4096, receiveSize: 4096, phy: "2M")
        #expect(channel.description == "L2CAP, 4096-byte SDUs, LE 2M")
        #expect(channel.shortLabel == "L2CAP 4096 B, 2M")
        let link = GattLink(device: nil, mtu: 247, sendsNotifications: true)
        #expect(link.transportDescription == TransportDescription(kind: .gatt, sendSize: 242, receiveSize: 244, attMTU: 247))
    }
}
