/// Reads big-endian fields from a byte slice, throwing instead of trapping on short input.
public struct ByteReader {
    public let bytes: ArraySlice<UInt8>
    public private(set) var position: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    public var remaining: Int { bytes.endIndex - position }
    public var isAtEnd: Bool { position == bytes.endIndex }

    public mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func readUInt16() throws(ByteReaderError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readBigEndian(width: 2))
    }

    public mutating func readUInt32() throws(ByteReaderError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readBigEndian(width: 4))
    }

    public mutating func readUInt64() throws(ByteReaderError) -> UInt64 {
        try readBigEndian(width: 8)
    }

    /// The next `count` bytes, without copying.
    public mutating func readBytes(_ count: Int) throws(ByteReaderError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw .truncated }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    /// Everything not read yet.
    public mutating func readRest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }

    /// Throws unless every byte was read.
    public func expectEnd() throws(ByteReaderError) {
        guard isAtEnd else { throw .trailingBytes(remaining) }
    }

    private mutating func readBigEndian(width: Int) throws(ByteReaderError) -> UInt64 {
        guard remaining >= width else { throw .truncated }
        var value: UInt64 = 0
        for i in 0..<width { value = value << 8 | UInt64(bytes[position + i]) }
        position += width
        return value
    }
}

public enum ByteReaderError: Error, Equatable, Sendable {
    case truncated
    case trailingBytes(Int)
}

extension Array where Element == UInt8 {
    public mutating func appendBigEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8)); append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func appendBigEndian(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    public mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
