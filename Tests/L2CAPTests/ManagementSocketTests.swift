import Testing
@testable import L2CAP

/// The one management-interface read (Read Controller Information): the command's bytes, and the
/// answers as the kernel sends them, whole, refused, cut short, or about something else.
@Suite("management socket")
struct ManagementSocketTests {
    /// A Command Complete for Read Controller Information on `index` with `current` settings.
    static func complete(index: UInt16 = 0, current: UInt32, cut: Int = 0) -> [UInt8] {
        var info = [UInt8](repeating: 0, count: 280)
        info[13] = UInt8(current & 0xff); info[14] = UInt8(current >> 8 & 0xff)
        info[15] = UInt8(current >> 16 & 0xff); info[16] = UInt8(current >> 24)
        let parameters = [0x04, 0x00, 0x00] + info.dropLast(cut)
        return [0x01, 0x00, UInt8(index & 0xff), UInt8(index >> 8), UInt8(parameters.count & 0xff), UInt8(parameters.count >> 8)] + parameters
    }

    @Test func theCommandIsOpcodeIndexAndNoParameters() {
        #expect(ManagementSocket.readInfoCommand(index: 0) == [0x04, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(ManagementSocket.readInfoCommand(index: 0x0102) == [0x04, 0x00, 0x02, 0x01, 0x00, 0x00])
        #expect(ManagementSocket.index(of: "hci0") == 0)
        #expect(ManagementSocket.index(of: "hci12") == 12)
        #expect(ManagementSocket.index(of: "/org/bluez/hci0") == nil)
        #expect(ManagementSocket.index(of: "hcix") == nil)
    }

    @Test func privacyIsBitThirteenOfTheCurrentSettings() throws {
        // Powered, LE, advertising, privacy: what Privacy = device gives on a powered adapter.
        let on = try #require(ManagementSocket.answer(Self.complete(current: 0x0000_2601), index: 0)).get()
        #expect(on.contains(.privacy) && on.contains(.lowEnergy) && on.contains(.powered))
        let off = try #require(ManagementSocket.answer(Self.complete(current: 0x0000_0601), index: 0)).get()
        #expect(!off.contains(.privacy) && off.contains(.lowEnergy))
    }

    @Test func otherPacketsAreNotTheAnswer() {
        #expect(ManagementSocket.answer(Self.complete(index: 1, current: 0x2000), index: 0) == nil)  // another adapter
        var otherCommand = Self.complete(current: 0x2000)
        otherCommand[6] = 0x05
        #expect(ManagementSocket.answer(otherCommand, index: 0) == nil)
        // An event (New Settings, 0x0006) about our adapter.
        #expect(ManagementSocket.answer([0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x01, 0x26, 0x00, 0x00], index: 0) == nil)
    }

    @Test func refusalsAndShortAnswersAreErrors() {
        // Command Status: invalid index (0x11).
        #expect(ManagementSocket.answer([0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x11], index: 0) == .failure(.status(0x11)))
        #expect(ManagementSocket.answer(Self.complete(current: 0x2000, cut: 200), index: 0) == .failure(.malformed))
        #expect(ManagementSocket.answer([0x01, 0x00], index: 0) == .failure(.malformed))
        // A length field that claims more than the packet holds.
        var long = Self.complete(current: 0x2000)
        long[4] = 0xFF
        #expect(ManagementSocket.answer(long, index: 0) == .failure(.malformed))
    }
}
