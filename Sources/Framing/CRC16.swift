/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR.
/// Check value 0x29B1 for ASCII "123456789".
///
/// Computed eight bytes at a time ("slicing by 8"): table `k` holds the CRC of a byte followed by
/// `k` zero bytes, so eight lookups XORed together advance the CRC by eight bytes. It runs over
/// every byte sent and received, so this is the framing layer's hot path.
public enum CRC16 {
    public static let initial: UInt16 = 0xFFFF

    /// Eight tables of 256 entries, one after the other.
    static let tables: [UInt16] = {
        var tables = [UInt16](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var crc = UInt16(index) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
            tables[index] = crc
        }
        for k in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(k - 1) * 256 + index]
                tables[k * 256 + index] = (previous << 8) ^ tables[Int(previous >> 8)]
            }
        }
        return tables
    }()

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
            tables.withUnsafeBufferPointer { t in
                var crc = crc
                var i = 0
                let count = input.count
                while i + 8 <= count {
                    let b0 = input[i] ^ UInt8(truncatingIfNeeded: crc >> 8)
                    let b1 = input[i + 1] ^ UInt8(truncatingIfNeeded: crc)
                    crc = t[7 * 256 + Int(b0)] ^ t[6 * 256 + Int(b1)]
                        ^ t[5 * 256 + Int(input[i + 2])] ^ t[4 * 256 + Int(input[i + 3])]
                        ^ t[3 * 256 + Int(input[i + 4])] ^ t[2 * 256 + Int(input[i + 5])]
                        ^ t[256 + Int(input[i + 6])] ^ t[Int(input[i + 7])]
                    i += 8
                }
                while i < count {
                    crc = (crc << 8) ^ t[Int(truncatingIfNeeded: (crc >> 8) ^ UInt16(input[i])) & 0xFF]
                    i += 1
                }
                return crc
            }
        }
    }
}
