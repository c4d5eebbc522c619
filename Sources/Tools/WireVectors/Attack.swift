import Framing

/// What an attacker on the link does to the datagrams of a recorded session. Datagrams are
/// counted per side from 0 over the whole session (every connection, retransmissions included).
public enum Attack: Equatable, Sendable {
    case none
    /// Flips bit `bit` (0 = least significant) of byte `byte` of one datagram. With `fixCRC`, the
    /// frame's CRC-16 is recomputed, so the change passes the framing layer and reaches the layers
    /// above; without, the receiving link drops the datagram as corrupt.
    case flipBit(from: WireVector.Side, datagram: Int, byte: Int, bit: Int, fixCRC: Bool)
    /// Drops every datagram `from` sends, from its `datagram`-th on.
    case dropFrom(from: WireVector.Side, datagram: Int)

    /// What arrives in place of the `index`-th datagram `side` sent: the datagram itself, a
    /// changed one, or nothing.
    func deliver(_ datagram: [UInt8], from side: WireVector.Side, index: Int) -> [UInt8]? {
        switch self {
        case .none:
            return datagram
        case let .flipBit(from, target, byte, bit, fixCRC):
            guard from == side, index == target, datagram.indices.contains(byte) else { return datagram }
            var changed = datagram
            changed[byte] ^= UInt8(1) << UInt8(bit & 7)
            if fixCRC, changed.count >= FrameLayout.crcSize {
                let crc = CRC16.checksum(changed.dropLast(FrameLayout.crcSize))
                changed[changed.count - 2] = UInt8(crc >> 8)
                changed[changed.count - 1] = UInt8(crc & 0xFF)
            }
            return changed
        case let .dropFrom(from, first):
            return from == side && index >= first ? nil : datagram
        }
    }
}
