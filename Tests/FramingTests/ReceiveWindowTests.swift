@testable import Framing
import Testing

@Suite struct ReceiveWindowTests {
    /// A one-fragment message holding `byte`.
    static func whole(_ byte: UInt8) -> Fragment {
        Fragment(messageLength: 1, isEnd: true, bytes: [byte])
    }

    static func receive(_ window: inout ReceiveWindow, _ sequence: Int, _ fragment: Fragment) throws
        -> ReceiveWindow.Arrival {
        try window.receive(sequence: SequenceNumber(sequence), fragment: fragment)
    }

    @Test func inOrderFramesAreDeliveredAtOnce() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        #expect(try Self.receive(&window, 0, Self.whole(7)) == .accepted(ackAtOnce: false))
        #expect(try Self.receive(&window, 1, Self.whole(8)) == .accepted(ackAtOnce: false))
        #expect(window.next == SequenceNumber(2))
        #expect(window.messagesDelivered == 2)
        #expect(window.bufferedBytes == 2)
        #expect(window.nextMessage() == [7])
        #expect(window.nextMessage() == [8])
        #expect(window.nextMessage() == nil)
        #expect(window.bufferedBytes == 0)
        #expect(window.selectiveAckBitmap(maxBytes: 16) == [])
    }

    /// A frame opening a gap asks for an ack at once, the rest of its run does not, the frame that
    /// fills the front gap does; the bitmap reports the held frames.
    @Test func reorderingGapsAndBitmap() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        #expect(try Self.receive(&window, 1, Self.whole(1)) == .accepted(ackAtOnce: true))
        #expect(try Self.receive(&window, 2, Self.whole(2)) == .accepted(ackAtOnce: false))
        #expect(try Self.receive(&window, 4, Self.whole(4)) == .accepted(ackAtOnce: true))
        #expect(window.bufferedFrames == 3 && window.bufferedFragmentBytes == 3)
        #expect(window.selectiveAckBitmap(maxBytes: 16) == [0b1011])   // frames 1, 2, 4 after 0
        #expect(window.nextMessage() == nil)
        #expect(try Self.receive(&window, 0, Self.whole(0)) == .accepted(ackAtOnce: true))
        #expect(window.next == SequenceNumber(3))
        #expect(window.bufferedFrames == 1)
        #expect(window.selectiveAckBitmap(maxBytes: 16) == [0b1])      // frame 4 after 3
        var messages: [[UInt8]] = []
        while let m = window.nextMessage() { messages.append(m) }
        #expect(messages == [[0], [1], [2]])
    }

    @Test func duplicatesHeldAndDelivered() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        _ = try Self.receive(&window, 0, Self.whole(0))
        _ = try Self.receive(&window, 2, Self.whole(2))
        #expect(try Self.receive(&window, 2, Self.whole(2)) == .duplicate)   // held already
        #expect(try Self.receive(&window, 0, Self.whole(0)) == .duplicate)   // delivered already
        #expect(window.bufferedFrames == 1)
        #expect(window.messagesDelivered == 1)
    }

    /// Ahead: from `next + limit` on. Behind: up to `capacity` back is a duplicate, further is out.
    @Test func outOfWindow() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        for s in 0..<3 { _ = try Self.receive(&window, s, Self.whole(UInt8(s))) }
        #expect(try Self.receive(&window, 3 + 15, Self.whole(1)) == .accepted(ackAtOnce: true))
        #expect(try Self.receive(&window, 3 + 16, Self.whole(1)) == .outOfWindow)
        #expect(try Self.receive(&window, 3 - 16, Self.whole(1)) == .duplicate)
        #expect(try Self.receive(&window, 3 - 17, Self.whole(1)) == .outOfWindow)
        window.limit = 4
        #expect(try Self.receive(&window, 3 + 3, Self.whole(1)) == .accepted(ackAtOnce: true))
        #expect(try Self.receive(&window, 3 + 4, Self.whole(1)) == .outOfWindow)
        window.limit = 0
        #expect(window.limit == 1)
        window.limit = 100
        #expect(window.limit == 16)
    }

    /// The bitmap stops at the last held frame, at `maxBytes` and at the window.
    @Test func bitmapReach() throws {
        var window = ReceiveWindow(capacity: 64, maxMessageLength: 100)
        _ = try Self.receive(&window, 1, Self.whole(1))
        _ = try Self.receive(&window, 40, Self.whole(40))
        #expect(window.selectiveAckBitmap(maxBytes: 4) == [0x01])
        #expect(window.selectiveAckBitmap(maxBytes: 8) == [0x01, 0, 0, 0, 0x80])
        var small = ReceiveWindow(capacity: 3, maxMessageLength: 100)
        _ = try Self.receive(&small, 2, Self.whole(2))
        #expect(small.selectiveAckBitmap(maxBytes: 4) == [0b10])
    }

    /// A message in three fragments arriving last-first is delivered once the first arrives; the
    /// open message's announced length is counted while it is reassembled.
    @Test func fragmentsReassembledInSequenceOrder() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        let first = Fragment(messageLength: 6, isEnd: false, bytes: [1, 2])
        let middle = Fragment(messageLength: nil, isEnd: false, bytes: [3, 4])
        let last = Fragment(messageLength: nil, isEnd: true, bytes: [5, 6])
        _ = try Self.receive(&window, 2, last)
        #expect(window.bufferedBytes == 2)
        _ = try Self.receive(&window, 0, first)
        #expect(window.bufferedBytes == 2 + 6)   // held fragment + reservation of the open message
        #expect(window.nextMessage() == nil)
        #expect(try Self.receive(&window, 1, middle) == .accepted(ackAtOnce: true))
        #expect(window.nextMessage() == [1, 2, 3, 4, 5, 6])
        #expect(window.bufferedBytes == 0)
    }

    @Test func brokenMessageRulesThrow() throws {
        var window = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        let orphan = Fragment(messageLength: nil, isEnd: true, bytes: [1])
        #expect(throws: FramingError.continuationWithoutStart) { try Self.receive(&window, 0, orphan) }
        var limited = ReceiveWindow(capacity: 16, maxMessageLength: 100)
        limited.maxMessageLength = 10
        let big = Fragment(messageLength: 11, isEnd: false, bytes: [1])
        #expect(throws: FramingError.messageTooLarge(length: 11, limit: 10)) { try Self.receive(&limited, 0, big) }
    }

    @Test func sequenceNumbersWrap() throws {
        var window = ReceiveWindow(capacity: 8, maxMessageLength: 100)
        for s in 0..<8190 { _ = try Self.receive(&window, s, Self.whole(1)) }
        while window.nextMessage() != nil {}
        #expect(try Self.receive(&window, 8191, Self.whole(2)) == .accepted(ackAtOnce: true))
        #expect(try Self.receive(&window, 1, Self.whole(4)) == .accepted(ackAtOnce: true))
        #expect(window.selectiveAckBitmap(maxBytes: 4) == [0b101])   // 8191 and 1 after 8190
        #expect(try Self.receive(&window, 8190, Self.whole(1)) == .accepted(ackAtOnce: true))
        #expect(try Self.receive(&window, 0, Self.whole(3)) == .accepted(ackAtOnce: true))
        #expect(window.next == SequenceNumber(2))
        var messages: [[UInt8]] = []
        while let m = window.nextMessage() { messages.append(m) }
        #expect(messages == [[1], [2], [3], [4]])
    }
}
