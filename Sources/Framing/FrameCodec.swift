import Pipeline

/// Encodes frames into datagrams and decodes datagrams into frames (docs/protocol.md §2).
///
/// Decoding never traps and never copies: a decoded fragment's bytes are a slice of the datagram.
public enum FrameCodec {
    private static let kindBit: UInt8 = 0x80
    private static let startBit: UInt8 = 0x40
    private static let endBit: UInt8 = 0x20

    /// The datagram for `frame`.
    public static func encode(_ frame: Frame) -> [UInt8] {
        switch frame {
        case let .data(sequence, fragment):
            return encodeData(sequence: sequence, messageLength: fragment.messageLength,
                              isEnd: fragment.isEnd, bytes: fragment.bytes)
        case let .ack(cumulative, selectiveAcks):
            return encodeAck(cumulative: cumulative, selectiveAcks: selectiveAcks)
        }
    }

    /// A data frame built straight from its fields (one allocation: the datagram).
    public static func encodeData(sequence: SequenceNumber, messageLength: UInt16?, isEnd: Bool,
                                  bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(FrameLayout.overhead + (messageLength == nil ? 0 : 2) + bytes.count)
        var first = UInt8(truncatingIfNeeded: sequence.value >> 8)
        if messageLength != nil { first |= startBit }
        if isEnd { first |= endBit }
        out.append(first)
        out.append(UInt8(truncatingIfNeeded: sequence.value))
        if let messageLength { out.appendBigEndian(messageLength) }
        out.append(contentsOf: bytes)
        out.appendBigEndian(CRC16.checksum(out))
        return out
    }

    /// An ack frame: 4 bytes plus the bitmap.
    public static func encodeAck(cumulative: SequenceNumber, selectiveAcks: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(FrameLayout.ackFrameBaseSize + selectiveAcks.count)
        out.append(kindBit | UInt8(truncatingIfNeeded: cumulative.value >> 8))
        out.append(UInt8(truncatingIfNeeded: cumulative.value))
        out += selectiveAcks
        out.appendBigEndian(CRC16.checksum(out))
        return out
    }

    /// The frame in `datagram`. The checks run in order: size for a CRC, CRC, then structure.
    public static func decode(_ datagram: [UInt8]) throws(FramingError) -> Frame {
        try decode(datagram[...])
    }

    public static func decode(_ datagram: ArraySlice<UInt8>) throws(FramingError) -> Frame {
        guard datagram.count >= FrameLayout.overhead else { throw .truncated }
        let start = datagram.startIndex
        let crcIndex = datagram.endIndex - FrameLayout.crcSize
        let expected = UInt16(datagram[crcIndex]) << 8 | UInt16(datagram[crcIndex + 1])
        guard CRC16.checksum(datagram[start..<crcIndex]) == expected else { throw .badCRC }

        let first = datagram[start]
        let sequence = SequenceNumber(Int(first & 0x1F) << 8 | Int(datagram[start + 1]))
        var reader = ByteReader(datagram[(start + FrameLayout.headerSize)..<crcIndex])

        if first & kindBit != 0 {
            guard first & (startBit | endBit) == 0 else { throw .reservedBits }
            let bitmap = reader.readRest()
            guard bitmap.count <= FrameLayout.maxSelectiveAckBytes else { throw .badLength }
            return .ack(cumulative: sequence, selectiveAcks: Array(bitmap))
        }

        var messageLength: UInt16?
        if first & startBit != 0 {
            guard let length = try? reader.readUInt16() else { throw .truncated }
            guard length > 0 else { throw .badLength }
            messageLength = length
        }
        let bytes = reader.readRest()
        guard !bytes.isEmpty else { throw .emptyFragment }
        return .data(sequence: sequence,
                     fragment: Fragment(messageLength: messageLength, isEnd: first & endBit != 0, bytes: bytes))
    }
}
