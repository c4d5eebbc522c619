/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR.
/// Check value 0x29B1 for ASCII "123456789".
public enum CRC16 {
    public static let initial: UInt16 = 0xFFFF

    /// One entry per value of the top byte of the running CRC.
    static let table: [UInt16] = (0..<256).map { index -> UInt16 in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }

    /// The CRC of `bytes`.
    @inlinable
    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        update(initial, with: bytes)
    }

    /// The CRC of `bytes`.
    @inlinable
    public static func checksum(_ bytes: [UInt8]) -> UInt16 {
        update(initial, with: bytes[...])
    }

    /// Continues a running CRC over more bytes.
    public static func update(_ crc: UInt16, with bytes: ArraySlice<UInt8>) -> UInt16 {
        bytes.withUnsafeBufferPointer { input in
            table.withUnsafeBufferPointer { table in
                var crc = crc
                for byte in input {
                    crc = (crc << 8) ^ table[Int(truncatingIfNeeded: (crc >> 8) ^ UInt16(byte)) & 0xFF]
                }
                return crc
            }
        }
    }
}
