import CBluetooth

/// A Bluetooth LE device address with its type, as BlueZ shows them (`Address` "AA:BB:CC:DD:EE:FF",
/// `AddressType` "public" or "random") and as the kernel takes them (`sockaddr_l2`).
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case `public`
        case random

        var socketValue: UInt8 {
            UInt8(self == .public ? BLESEND_BDADDR_LE_PUBLIC : BLESEND_BDADDR_LE_RANDOM)
        }
    }

    /// The six bytes most significant first, as written.
    public let bytes: [UInt8]
    public let kind: Kind

    /// Parses "AA:BB:CC:DD:EE:FF" (either case); nil for anything else.
    public init?(_ text: String, kind: Kind) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
        self.kind = kind
    }

    /// BlueZ's `AddressType` property ("public", "random"); nil for anything else.
    public init?(_ text: String, bluezType: String) {
        guard let kind = Kind(rawValue: bluezType) else { return nil }
        self.init(text, kind: kind)
    }

    init(socketAddress: blesend_sockaddr_l2) {
        let b = socketAddress.l2_bdaddr.b
        bytes = [b.5, b.4, b.3, b.2, b.1, b.0]
        kind = Int32(socketAddress.l2_bdaddr_type) == Int32(BLESEND_BDADDR_LE_RANDOM) ? .random : .public
    }

    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// `sockaddr_l2` for this address and `psm` (0: let the kernel pick one when binding).
    func socketAddress(psm: UInt16) -> blesend_sockaddr_l2 {
        var address = blesend_sockaddr_l2()
        address.l2_family = sa_family_t(BLESEND_AF_BLUETOOTH)
        address.l2_psm = psm.littleEndian
        address.l2_bdaddr.b = (bytes[5], bytes[4], bytes[3], bytes[2], bytes[1], bytes[0])
        address.l2_bdaddr_type = kind.socketValue
        return address
    }
}
