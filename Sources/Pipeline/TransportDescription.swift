/// What carries one connection's datagrams, as people and logs see it: the kind of transport, the
/// datagram sizes each way, and what the kernel says of the radio where it says anything.
public struct TransportDescription: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// GATT: write-without-response one way, notifications the other (docs/protocol.md §1).
        case gatt
        /// An L2CAP LE credit-based channel (docs/protocol.md §1.2).
        case l2cap
        /// In memory (tests, benchmarks).
        case memory
    }

    public var kind: Kind
    /// The largest datagram we send.
    public var sendSize: Int
    /// The largest datagram the peer sends us.
    public var receiveSize: Int
    /// The ATT MTU (GATT only).
    public var attMTU: Int?
    /// The LE PHY each way ("1M", "2M", "Coded"), where the kernel reports it (L2CAP's `BT_PHY`).
    public var phy: String?

    public init(kind: Kind, sendSize: Int, receiveSize: Int, attMTU: Int? = nil, phy: String? = nil) {
        self.kind = kind
        self.sendSize = sendSize
        self.receiveSize = receiveSize
        self.attMTU = attMTU
        self.phy = phy
    }

    /// For the progress line: "L2CAP 4096 B, 2M" / "GATT mtu 517".
    public var shortLabel: String {
        var text: String
        switch kind {
        case .gatt: text = "GATT mtu \(attMTU.map(String.init) ?? "?")"
        case .l2cap: text = "L2CAP \(sendSize) B"
        case .memory: text = "memory \(sendSize) B"
        }
        if let phy { text += ", \(phy)" }
        return text
    }

    /// "L2CAP, 4096-byte SDUs, LE 2M" / "GATT, ATT MTU 517 (510-byte values)".
    public var description: String {
        var text: String
        switch kind {
        case .gatt:
            text = "GATT, ATT MTU \(attMTU.map(String.init) ?? "?") (\(sendSize)-byte values)"
        case .l2cap:
            text = "L2CAP, \(sendSize)-byte SDUs"
        case .memory:
            text = "memory, \(sendSize)-byte datagrams"
        }
        if let phy { text += ", LE \(phy)" }
        return text
    }
}
