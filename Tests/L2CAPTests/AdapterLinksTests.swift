import Testing
@testable import L2CAP

/// `HCIGETCONNLIST`'s request and answer, as bytes (the kernel's `struct hci_conn_list_req` and
/// `struct hci_conn_info`, include/net/bluetooth/hci_sock.h).
@Suite("Adapter links (HCIGETCONNLIST)")
struct AdapterLinksTests {
    /// One `hci_conn_info`: handle, bdaddr (least significant byte first), type, out, state, link_mode.
    static func entry(handle: UInt16, address: [UInt8], type: UInt8, out: UInt8) -> [UInt8] {
        [UInt8(handle & 0xff), UInt8(handle >> 8)] + address.reversed() + [type, out] + [0x01, 0x00] + [0x04, 0x00, 0x00, 0x00]
    }

    @Test func theRequestNamesTheAdapterAndItsRoom() {
        let request = AdapterLinks.requestBuffer(index: 0x0102, capacity: 3)
        #expect(request.count == 4 + 3 * 16)
        #expect(Array(request[0..<4]) == [0x02, 0x01, 0x03, 0x00])
        #expect(request[4...].allSatisfy { $0 == 0 })
    }

    @Test func anAnswerGivesEachLinksAddressBearerAndDirection() throws {
        let keyboard: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]
        let sender: [UInt8] = [0x00, 0xAA, 0x01, 0x01, 0x00, 0x01]
        let answer = [0x00, 0x00, 0x03, 0x00]
            + Self.entry(handle: 42, address: keyboard, type: 0x01, out: 0)
            + Self.entry(handle: 43, address: sender, type: 0x80, out: 0)
            + Self.entry(handle: 44, address: sender, type: 0x80, out: 1)
            + [UInt8](repeating: 0, count: 16)   // room the kernel did not fill
        let links = try #require(AdapterLinks.parse(answer))
        #expect(links == [
            AdapterLink(address: keyboard, bearer: .classic, outgoing: false),
            AdapterLink(address: sender, bearer: .lowEnergy, outgoing: false),
            AdapterLink(address: sender, bearer: .lowEnergy, outgoing: true),
        ])
    }

    @Test func noLinksIsAnEmptyList() {
        #expect(AdapterLinks.parse(AdapterLinks.requestBuffer(index: 0, capacity: 0)) == [])
        #expect(AdapterLinks.parse([0, 0, 0, 0]) == [])
    }

    @Test func anotherTypeIsNeitherLENorClassic() throws {
        let answer = [0x00, 0x00, 0x01, 0x00] + Self.entry(handle: 1, address: [1, 2, 3, 4, 5, 6], type: 0x02, out: 1)
        #expect(try #require(AdapterLinks.parse(answer)).first?.bearer == .other(0x02))
    }

    @Test(arguments: [
        [UInt8](),
        [0x00, 0x00, 0x01],
        [0x00, 0x00, 0x01, 0x00] + [UInt8](repeating: 0, count: 15),   // one entry claimed, 15 bytes
        [0x00, 0x00, 0xff, 0xff] + [UInt8](repeating: 0, count: 64),
    ])
    func aShortAnswerIsRefused(answer: [UInt8]) {
        #expect(AdapterLinks.parse(answer) == nil)
    }
}
