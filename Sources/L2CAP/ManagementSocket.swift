import CBluetooth
import Glibc

/// Bits of an adapter's settings as the kernel's management interface reports them (BlueZ
/// `doc/mgmt-protocol.rst`, "Read Controller Information").
public struct ControllerSettings: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = ControllerSettings(rawValue: 1 << 0)
    public static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    public static let advertising = ControllerSettings(rawValue: 1 << 10)
    public static let privacy = ControllerSettings(rawValue: 1 << 13)
    public static let staticAddress = ControllerSettings(rawValue: 1 << 15)
}

/// Why the management interface gave no settings.
public enum ManagementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// socket(2) or bind(2) failed (no Bluetooth in the kernel, or a sandbox without AF_BLUETOOTH).
    case unavailable(errno: Int32)
    case sendFailed(errno: Int32)
    case receiveFailed(errno: Int32)
    /// No answer within the time limit.
    case timeout
    /// The kernel answered with this status (0x11: no such adapter; 0x14: permission denied).
    case status(UInt8)
    /// An answer too short for what it should hold.
    case malformed

    public var description: String {
        switch self {
        case .unavailable(let e): "no management socket (\(String(cString: strerror(e))))"
        case .sendFailed(let e): "sending failed (\(String(cString: strerror(e))))"
        case .receiveFailed(let e): "receiving failed (\(String(cString: strerror(e))))"
        case .timeout: "no answer in time"
        case .status(0x11): "no such adapter (status 0x11)"
        case .status(0x14): "permission denied (status 0x14)"
        case .status(let s): "status 0x\(String(s, radix: 16))"
        case .malformed: "a malformed answer"
        }
    }
}

/// One read of the kernel's Bluetooth management interface: Read Controller Information
/// (opcode 0x0004). The kernel allows that command on sockets of users without CAP_NET_ADMIN
/// (`HCI_MGMT_UNTRUSTED` in net/bluetooth/mgmt.c), so blerecv needs no privilege for it;
/// nothing is ever changed. (Here beside the L2CAP sockets: both are AF_BLUETOOTH system calls.)
public enum ManagementSocket {
    static let readInfo: UInt16 = 0x0004
    static let commandComplete: UInt16 = 0x0001
    static let commandStatus: UInt16 = 0x0002
    /// Address 6, version 1, manufacturer 2, supported settings 4, current settings 4, class 3,
    /// name 249, short name 11.
    static let infoLength = 280
    static let currentSettingsOffset = 13

    /// "hci3" → 3.
    public static func index(of adapter: String) -> UInt16? {
        guard adapter.hasPrefix("hci"), let n = UInt16(adapter.dropFirst(3)), n != 0xffff else { return nil }
        return n
    }

    /// The command packet: opcode, controller index, parameter length (all little-endian), no parameters.
    static func readInfoCommand(index: UInt16) -> [UInt8] {
        littleEndian(readInfo) + littleEndian(index) + littleEndian(0)
    }

    /// What one packet from the socket says about our command: nil when it is about something
    /// else (another event or adapter), else the current settings or the kernel's refusal.
    static func answer(_ packet: [UInt8], index: UInt16) -> Result<ControllerSettings, ManagementError>? {
        guard packet.count >= 6 else { return .failure(.malformed) }
        let event = uint16(packet, 0), from = uint16(packet, 2), length = Int(uint16(packet, 4))
        guard event == commandComplete || event == commandStatus, from == index else { return nil }
        guard packet.count >= 9, packet.count - 6 >= length else { return .failure(.malformed) }
        guard uint16(packet, 6) == readInfo else { return nil }
        let status = packet[8]
        guard status == 0 else { return .failure(.status(status)) }
        guard event == commandComplete, length >= 3 + infoLength else { return .failure(.malformed) }
        let offset = 9 + currentSettingsOffset
        let current = UInt32(packet[offset]) | UInt32(packet[offset + 1]) << 8 | UInt32(packet[offset + 2]) << 16 | UInt32(packet[offset + 3]) << 24
        return .success(ControllerSettings(rawValue: current))
    }

    /// Asks the kernel for adapter `index`'s current settings (at most `timeout`).
    public static func controllerSettings(index: UInt16, timeout: Duration = .seconds(2)) throws(ManagementError) -> ControllerSettings {
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(Int32(BLESEND_AF_BLUETOOTH), type, Int32(BLESEND_BTPROTO_HCI))
        guard fd >= 0 else { throw .unavailable(errno: errno) }
        defer { close(fd) }
        var address = blesend_sockaddr_hci(
            hci_family: sa_family_t(BLESEND_AF_BLUETOOTH), hci_dev: UInt16(BLESEND_HCI_DEV_NONE), hci_channel: UInt16(BLESEND_HCI_CHANNEL_CONTROL))
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<blesend_sockaddr_hci>.size))
            }
        }
        guard bound == 0 else { throw .unavailable(errno: errno) }
        let command = readInfoCommand(index: index)
        let sent = command.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == command.count else { throw .sendFailed(errno: sent < 0 ? errno : EMSGSIZE) }
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw .timeout }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw .timeout }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .receiveFailed(errno: errno)
            }
            if let result = answer(Array(buffer[0..<n]), index: index) { return try result.get() }
        }
    }

    private static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8)] }
    private static func uint16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
}
