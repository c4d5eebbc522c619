import CBluetooth
import Glibc
import Testing
@testable import L2CAP

@Suite("Bluetooth addresses")
struct BluetoothAddressTests {
    @Test func parsesAndPrintsBlueZText() throws {
        let address = try #require(BluetoothAddress("00:aa:01:02:0B:ff", bluezType: "random"))
        #expect(address.bytes == [0x00, 0xAA, 0x01, 0x02, 0x0B, 0xFF])
        #expect(address.kind == .random)
        #expect(address.description == "00:AA:01:02:0B:FF")
    }

    @Test(arguments: ["", "00:11:22:33:44", "00:11:22:33:44:55:66", "0:11:22:33:44:55", "00:11:22:33:44:GG", "00-11-22-33-44-55", "00:11:22:33:44:555"])
    func rejectsMalformedText(_ text: String) {
        #expect(BluetoothAddress(text, kind: .public) == nil)
    }

    @Test func rejectsUnknownAddressType() {
        #expect(BluetoothAddress("00:11:22:33:44:55", bluezType: "bredr") == nil)
    }

    /// The kernel's `sockaddr_l2`: family 31, PSM little-endian, address least significant byte
    /// first, LE address type 1 (public) or 2 (random); 14 bytes.
    @Test func socketAddressLayout() throws {
        let address = try #require(BluetoothAddress("11:22:33:44:55:66", kind: .public))
        var socketAddress = address.socketAddress(psm: 0x0081)
        #expect(MemoryLayout<blesend_sockaddr_l2>.size == 14)
        let bytes = withUnsafeBytes(of: &socketAddress) { Array($0) }
        #expect(bytes == [31, 0, 0x81, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 1, 0])
        #expect(BluetoothAddress(socketAddress: socketAddress) == address)
        let random = try #require(BluetoothAddress("C0:00:00:00:00:01", kind: .random))
        #expect(random.socketAddress(psm: 0).l2_bdaddr_type == 2)
        #expect(BluetoothAddress(socketAddress: random.socketAddress(psm: 0)) == random)
    }
}

@Suite("L2CAP socket details")
struct L2CAPSocketTests {
    @Test func phyNames() {
        #expect(L2CAPSocket.phyName(0) == nil)
        #expect(L2CAPSocket.phyName(0x0200 | 0x0400) == "1M")
        #expect(L2CAPSocket.phyName(0x0800 | 0x1000) == "2M")
        #expect(L2CAPSocket.phyName(0x0800 | 0x0400) == "2M/1M")
        #expect(L2CAPSocket.phyName(0x2000 | 0x4000) == "Coded")
        // BR/EDR bits alone say nothing about LE.
        #expect(L2CAPSocket.phyName(0x0001 | 0x0008) == nil)
    }

    /// Without Bluetooth in the kernel (containers, CI machines) opening a socket fails with a typed
    /// error, never a crash; with it, a listener gets a PSM from the LE dynamic range only on an
    /// adapter address that exists, which the lab tests cover.
    @Test func openingReportsUnavailableOrSucceeds() throws {
        let nowhere = try #require(BluetoothAddress("00:00:00:00:00:00", kind: .public))
        do {
            let fd = try L2CAPSocket.open(boundTo: nowhere, psm: 0, receiveMTU: 4096)
            #expect(fd >= 0)
            close(fd)
        } catch {
            switch error {
            case .unavailable(let code), .bindFailed(let code), .optionFailed(_, let code):
                #expect(code != 0)
            default:
                Issue.record("unexpected error \(error)")
            }
        }
    }
}
