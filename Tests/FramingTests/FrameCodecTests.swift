import Framing
import MemoryTransport
import Pipeline
import Testing

@Suite struct FrameCodecTests {
    static let samples: [Frame] = [
        .data(sequence: SequenceNumber(0), fragment: Fragment(messageLength: 3, isEnd: true, bytes: [1, 2, 3])),
        .data(sequence: SequenceNumber(8191), fragment: Fragment(messageLength: 65535, isEnd: false, bytes: [9])),
        .data(sequence: SequenceNumber(4660), fragment: Fragment(messageLength: nil, isEnd: false, bytes: ArraySlice(0..<200))),
        .data(sequence: SequenceNumber(1), fragment: Fragment(messageLength: nil, isEnd: true, bytes: [0xFF])),
        .ack(cumulative: SequenceNumber(0), selectiveAcks: []),
        .ack(cumulative: SequenceNumber(8191), selectiveAcks: [0xFF, 0xFF, 0xFF, 0xFF]),
        .ack(cumulative: SequenceNumber(300), selectiveAcks: [0x01, 0, 0, 0x80]),
        .ack(cumulative: SequenceNumber(9), selectiveAcks: Array(repeating: 0x5A, count: 16)),
    ]

    @Test(arguments: samples)
    func roundTrip(frame: Frame) throws {
        let datagram = FrameCodec.encode(frame)
        #expect(try FrameCodec.decode(datagram) == frame)
    }

    @Test func knownBytes() {
        let data = FrameCodec.encode(.data(sequence: SequenceNumber(0x1234),
                                           fragment: Fragment(messageLength: 2, isEnd: true, bytes: [0xAB, 0xCD])))
        #expect(Array(data.prefix(6)) == [0x40 | 0x20 | 0x12, 0x34, 0x00, 0x02, 0xAB, 0xCD])
        #expect(data.count == 8)
        let crc = CRC16.checksum(data[0..<6])
        #expect(data[6] == UInt8(crc >> 8) && data[7] == UInt8(crc & 0xFF))
        let ack = FrameCodec.encode(.ack(cumulative: SequenceNumber(5), selectiveAcks: [1, 2, 3]))
        #expect(Array(ack.prefix(5)) == [0x80, 0x05, 1, 2, 3])
        #expect(ack.count == FrameLayout.ackFrameBaseSize + 3)
        #expect(FrameCodec.encode(.ack(cumulative: SequenceNumber(5), selectiveAcks: [])).count == 4)
    }

    @Test func overheadIsFourBytesPlusTwoPerMessage() {
        let cont = FrameCodec.encode(.data(sequence: .zero, fragment: Fragment(messageLength: nil, isEnd: false, bytes: ArraySlice(repeating: 7, count: 100))))
        let start = FrameCodec.encode(.data(sequence: .zero, fragment: Fragment(messageLength: 500, isEnd: false, bytes: ArraySlice(repeating: 7, count: 100))))
        #expect(cont.count == 104)
        #expect(start.count == 106)
    }

    /// Every proper prefix of every sample is refused with a typed error.
    @Test(arguments: samples)
    func everyTruncationFails(frame: Frame) {
        let datagram = FrameCodec.encode(frame)
        for length in 0..<datagram.count {
            let prefix = Array(datagram.prefix(length))
            #expect(throws: FramingError.self) { try FrameCodec.decode(prefix) }
        }
    }

    /// Truncations that keep a valid CRC (re-sealed) hit the structural checks.
    @Test func resealedShortFramesGiveSpecificErrors() {
        func sealed(_ bytes: [UInt8]) -> [UInt8] { var b = bytes; b.appendBigEndian(CRC16.checksum(bytes)); return b }
        #expect(throws: FramingError.truncated) { try FrameCodec.decode([0x00]) }
        #expect(throws: FramingError.emptyFragment) { try FrameCodec.decode(sealed([0x00, 0x01])) }
        #expect(throws: FramingError.truncated) { try FrameCodec.decode(sealed([0x40, 0x01, 0x00])) }
        #expect(throws: FramingError.emptyFragment) { try FrameCodec.decode(sealed([0x40, 0x01, 0x00, 0x05])) }
        #expect(throws: FramingError.badLength) { try FrameCodec.decode(sealed([0x60, 0x01, 0x00, 0x00, 0x07])) }
        // Acks carry a bitmap of any length up to 512 bytes.
        #expect(throws: Never.self) { try FrameCodec.decode(sealed([0x80, 0x01, 0, 0, 0])) }
        #expect(throws: Never.self) { try FrameCodec.decode(sealed([0x80, 0x01] + [UInt8](repeating: 0xFF, count: 512))) }
        #expect(throws: FramingError.badLength) { try FrameCodec.decode(sealed([0x80, 0x01] + [UInt8](repeating: 0, count: 513))) }
        #expect(throws: Never.self) { try FrameCodec.decode(sealed([0x00, 0x01, 0x42])) }
        #expect(throws: Never.self) { try FrameCodec.decode(sealed([0x60, 0x01, 0x00, 0x01, 0x42])) }
    }

    @Test(arguments: [UInt8(0x40), 0x20, 0x60])
    func ackReservedBits(bits: UInt8) {
        var bytes: [UInt8] = [0x80 | bits, 0x07, 0, 0, 0, 1]
        bytes.appendBigEndian(CRC16.checksum(bytes))
        #expect(throws: FramingError.reservedBits) { try FrameCodec.decode(bytes) }
    }

    @Test(arguments: samples)
    func everySingleBitFlipIsDetected(frame: Frame) {
        let datagram = FrameCodec.encode(frame)
        for bit in 0..<(datagram.count * 8) {
            var corrupted = datagram
            corrupted[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: FramingError.badCRC) { try FrameCodec.decode(corrupted) }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func garbageFuzz(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var decoded = 0
        for _ in 0..<10_000 {
            let length = Int(random.next() % 64)
            var bytes = random.bytes(length)
            // Half of them get a valid CRC so the structural checks run too.
            if length >= 2, random.chance(0.5) {
                bytes.removeLast(2)
                bytes.appendBigEndian(CRC16.checksum(bytes))
            }
            do {
                let frame = try FrameCodec.decode(bytes)
                decoded += 1
                #expect(FrameCodec.encode(frame) == bytes)   // a valid frame is canonical
            } catch {
                // typed: FramingError by signature
                _ = error as FramingError
            }
        }
        #expect(decoded > 1000)
    }
}
