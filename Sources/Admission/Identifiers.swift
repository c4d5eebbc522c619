/// A device the radio is linked to: what the driver names it by (a BlueZ device object path or an
/// address). The policy only compares it; it never parses it.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

/// A transfer channel (an L2CAP channel or a GATT link) as the driver numbers it. The driver never
/// reuses a number within one policy's life.
public struct ChannelID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { "channel \(rawValue)" }
}

/// A sender's static public key as the handshake proved it (its bytes, or any fixed encoding of
/// them); two channels with equal ids are the same sender.
public struct PeerKeyID: Hashable, Sendable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}
