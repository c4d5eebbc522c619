import CBluetooth
import Glibc

/// One link of an adapter as the kernel holds it: an entry of `HCIGETCONNLIST`'s answer
/// (`struct hci_conn_info` in the kernel's include/net/bluetooth/hci_sock.h).
public struct AdapterLink: Sendable, Hashable {
    public enum Bearer: Sendable, Hashable {
        /// LE (`LE_LINK`, 0x80).
        case lowEnergy
        /// BR/EDR (`ACL_LINK`, 0x01): a keyboard, a headset, a phone's classic profiles.
        case classic
        /// Audio and the rest (SCO, eSCO, ISO): never a sender's.
        case other(UInt8)
    }

    /// The peer's address, most significant byte first (as BlueZ writes it).
    public let address: [UInt8]
    public let bearer: Bearer
    /// This adapter connected to the peer (it was the central, or the BR/EDR initiator).
    public let outgoing: Bool

    public init(address: [UInt8], bearer: Bearer, outgoing: Bool) {
        self.address = address
        self.bearer = bearer
        self.outgoing = outgoing
    }
}

/// The links an adapter holds, as the kernel lists them (`HCIGETCONNLIST` on a raw HCI socket).
/// The kernel answers that request for any user (no capability, net/bluetooth/hci_sock.c), and
/// nothing is changed.
public enum AdapterLinks {
    /// `_IOR('H', 212, int)`.
    static let request: UInt = 0x8004_48D4
    /// `struct hci_conn_info`: handle 2, bdaddr 6, type 1, out 1, state 2, link_mode 4.
    static let entrySize = 16
    /// How many entries we ask room for (the kernel fills at most what it holds).
    static let capacity = 64

    /// The request: `struct hci_conn_list_req` with `dev_id`, `conn_num` and room for the entries.
    static func requestBuffer(index: UInt16, capacity: Int = capacity) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4 + capacity * entrySize)
        buffer[0] = UInt8(index & 0xff)
        buffer[1] = UInt8(index >> 8)
        buffer[2] = UInt8(capacity & 0xff)
        buffer[3] = UInt8(capacity >> 8)
        return buffer
    }

    /// The entries of an answer: nil when `conn_num` claims more than the buffer holds.
    static func parse(_ answer: [UInt8]) -> [AdapterLink]? {
        guard answer.count >= 4 else { return nil }
        let count = Int(answer[2]) | Int(answer[3]) << 8
        guard answer.count >= 4 + count * entrySize else { return nil }
        return (0..<count).map { i in
            let at = 4 + i * entrySize
            // bdaddr_t is least significant byte first.
            let address = answer[(at + 2)..<(at + 8)].reversed()
            let bearer: AdapterLink.Bearer = switch answer[at + 8] {
            case 0x80: .lowEnergy
            case 0x01: .classic
            case let type: .other(type)
            }
            return AdapterLink(address: Array(address), bearer: bearer, outgoing: answer[at + 9] != 0)
        }
    }

    /// The links adapter `index` ("hci3" → 3, `ManagementSocket.index(of:)`) holds now.
    public static func read(index: UInt16) throws(ManagementError) -> [AdapterLink] {
        let fd = socket(Int32(BLESEND_AF_BLUETOOTH), Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(BLESEND_BTPROTO_HCI))
        guard fd >= 0 else { throw .unavailable(errno: errno) }
        defer { close(fd) }
        var buffer = requestBuffer(index: index)
        let result = buffer.withUnsafeMutableBytes { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return -1 }
            return ioctl(fd, request, base)
        }
        guard result == 0 else { throw errno == ENODEV ? .status(0x11) : .receiveFailed(errno: errno) }
        guard let links = parse(buffer) else { throw .malformed }
        return links
    }
}
