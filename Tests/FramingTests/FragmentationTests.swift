import Framing
import MemoryTransport
import Testing

@Suite struct FragmentationTests {
    static let datagramSizes = [20, 182, 244, 510]

    static func message(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var random = SeededRandom(seed: seed &+ UInt64(count))
        return random.bytes(count)
    }

    @Test(arguments: datagramSizes)
    func roundTripThroughFramesAtBoundaries(datagramSize: Int) throws {
        for count in [1, datagramSize - 7, datagramSize - 6, datagramSize - 5, datagramSize - 4, datagramSize - 3,
                      2 * datagramSize, 65535] where count >= 1 {
            let message = Self.message(count)
            var fragmenter = MessageFragmenter(maxDatagramSize: datagramSize)
            var fragments: [Fragment] = []
            try fragmenter.encode(message, into: &fragments)
            // Every fragment fits, only the first starts, only the last ends, none is empty.
            for (i, fragment) in fragments.enumerated() {
                #expect(fragment.encodedSize <= datagramSize)
                #expect(!fragment.bytes.isEmpty)
                #expect(fragment.isStart == (i == 0))
                #expect(fragment.isEnd == (i == fragments.count - 1))
            }
            // Full frames except the last.
            for fragment in fragments.dropLast() { #expect(fragment.encodedSize == datagramSize) }
            let expectedFrames = count <= datagramSize - 6 ? 1 : 1 + (count - (datagramSize - 6) + datagramSize - 5) / (datagramSize - 4)
            #expect(fragments.count == expectedFrames)

            // Through the wire format and back.
            var receiver = MessageFragmenter(maxDatagramSize: datagramSize)
            var out: [[UInt8]] = []
            for (i, fragment) in fragments.enumerated() {
                let datagram = FrameCodec.encode(.data(sequence: SequenceNumber(i), fragment: fragment))
                #expect(datagram.count <= datagramSize)
                guard case let .data(_, decoded) = try FrameCodec.decode(datagram) else {
                    Issue.record("not a data frame"); continue
                }
                try receiver.decode(decoded, into: &out)
                #expect(out.count == (i == fragments.count - 1 ? 1 : 0))
            }
            #expect(out == [message])
        }
    }

    /// The smallest frames the format allows (1-byte fragments: a 7-byte start frame, then 5-byte
    /// continuation frames) give the same message as one big frame.
    @Test(arguments: [1, 2, 3, 300, 4114])
    func byteByByteEqualsOneBigFrame(count: Int) throws {
        let message = Self.message(count)
        var tiny = MessageReassembler()
        var result: [UInt8]?
        for i in 0..<count {
            let fragment = Fragment(messageLength: i == 0 ? UInt16(count) : nil, isEnd: i == count - 1,
                                    bytes: message[i..<(i + 1)])
            let datagram = FrameCodec.encode(.data(sequence: SequenceNumber(i), fragment: fragment))
            #expect(datagram.count == (i == 0 ? FrameLayout.minimumStartFrameSize : FrameLayout.minimumDataFrameSize))
            guard case let .data(_, decoded) = try FrameCodec.decode(datagram) else { Issue.record(); return }
            let produced = try tiny.append(decoded)
            #expect((produced != nil) == (i == count - 1))
            if let produced { result = produced }
        }
        #expect(result == message)
        #expect(!tiny.hasOpenMessage)

        var big = MessageReassembler()
        let whole = FrameCodec.encode(.data(sequence: .zero, fragment: Fragment(messageLength: UInt16(count), isEnd: true, bytes: message[...])))
        guard case let .data(_, decoded) = try FrameCodec.decode(whole) else { Issue.record(); return }
        #expect(try big.append(decoded) == message)
    }

    @Test func minimumDatagramSizeIsEight() throws {
        var fragmenter = MessageFragmenter(maxDatagramSize: 3)
        #expect(fragmenter.maxDatagramSize == 8)
        var fragments: [Fragment] = []
        try fragmenter.encode(Self.message(10), into: &fragments)
        #expect(fragments.map(\.bytes.count) == [2, 4, 4])
    }

    @Test func emptyAndOversizeMessagesAreRefused() {
        var fragmenter = MessageFragmenter(maxDatagramSize: 20, maxMessageLength: 100)
        var fragments: [Fragment] = []
        #expect(throws: FramingError.badLength) { try fragmenter.encode([], into: &fragments) }
        #expect(throws: FramingError.messageTooLarge(length: 101, limit: 100)) {
            try fragmenter.encode(Self.message(101), into: &fragments)
        }
        #expect(fragments.isEmpty)
    }

    // MARK: bad sequences

    static func start(_ length: UInt16, _ bytes: [UInt8], end: Bool = false) -> Fragment {
        Fragment(messageLength: length, isEnd: end, bytes: bytes[...])
    }
    static func more(_ bytes: [UInt8], end: Bool = false) -> Fragment {
        Fragment(messageLength: nil, isEnd: end, bytes: bytes[...])
    }

    @Test func continuationWithoutStart() {
        var r = MessageReassembler()
        #expect(throws: FramingError.continuationWithoutStart) { try r.append(Self.more([1])) }
        #expect(throws: FramingError.continuationWithoutStart) { try r.append(Self.more([1], end: true)) }
    }

    @Test func startWhileMessageOpen() throws {
        var r = MessageReassembler()
        #expect(try r.append(Self.start(4, [1, 2])) == nil)
        #expect(throws: FramingError.startInsideMessage) { try r.append(Self.start(1, [1], end: true)) }
    }

    @Test func moreBytesThanAnnounced() throws {
        var single = MessageReassembler()
        #expect(throws: FramingError.messageOverrun) { try single.append(Self.start(2, [1, 2, 3], end: true)) }
        var split = MessageReassembler()
        _ = try split.append(Self.start(4, [1, 2]))
        #expect(throws: FramingError.messageOverrun) { try split.append(Self.more([3, 4, 5], end: true)) }
        var unterminated = MessageReassembler()
        _ = try unterminated.append(Self.start(4, [1, 2]))
        #expect(throws: FramingError.messageOverrun) { try unterminated.append(Self.more([3, 4, 5])) }
    }

    @Test func endFlagAndLengthMustAgree() throws {
        var early = MessageReassembler()
        #expect(throws: FramingError.lengthMismatch) { try early.append(Self.start(3, [1, 2], end: true)) }
        var late = MessageReassembler()
        #expect(throws: FramingError.lengthMismatch) { try late.append(Self.start(2, [1, 2])) }
        var middle = MessageReassembler()
        _ = try middle.append(Self.start(5, [1, 2]))
        #expect(throws: FramingError.lengthMismatch) { try middle.append(Self.more([3, 4, 5])) }
        var short = MessageReassembler()
        _ = try short.append(Self.start(5, [1, 2]))
        #expect(throws: FramingError.lengthMismatch) { try short.append(Self.more([3], end: true)) }
    }

    @Test func announcedLengthOverLimit() {
        var r = MessageReassembler(maxMessageLength: 1000)
        #expect(throws: FramingError.messageTooLarge(length: 1001, limit: 1000)) { try r.append(Self.start(1001, [1])) }
        #expect(r.bufferedBytes == 0)
    }

    @Test func reassemblerIsReusableAfterAMessage() throws {
        var r = MessageReassembler()
        #expect(try r.append(Self.start(3, [1])) == nil)
        #expect(try r.append(Self.more([2, 3], end: true)) == [1, 2, 3])
        #expect(try r.append(Self.start(1, [9], end: true)) == [9])
    }
}
