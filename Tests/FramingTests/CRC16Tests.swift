import Framing
import Testing

@Suite struct CRC16Tests {
    @Test func checkValue() {
        #expect(CRC16.checksum(Array("123456789".utf8)) == 0x29B1)
    }

    @Test func emptyInputIsInitialValue() {
        #expect(CRC16.checksum([UInt8]()) == 0xFFFF)
    }

    @Test func matchesBitwiseReference() {
        func reference(_ bytes: [UInt8]) -> UInt16 {
            var crc: UInt16 = 0xFFFF
            for byte in bytes {
                crc ^= UInt16(byte) << 8
                for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
            }
            return crc
        }
        var input: [UInt8] = []
        for i in 0..<600 {
            input.append(UInt8(truncatingIfNeeded: i &* 37 &+ 11))
            #expect(CRC16.checksum(input) == reference(input))
        }
    }

    @Test func incrementalEqualsOneShot() {
        let data = Array("The quick brown fox jumps over the lazy dog".utf8)
        let split = CRC16.update(CRC16.update(CRC16.initial, with: data[0..<10]), with: data[10...])
        #expect(split == CRC16.checksum(data))
        #expect(CRC16.checksum(data[5...]) == CRC16.checksum(Array(data[5...])))
    }
}
