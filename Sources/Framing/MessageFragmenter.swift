import Pipeline

/// Cuts messages into fragments that fit a datagram, and joins them again.
///
/// The first fragment carries the message length and `datagramSize - 6` bytes; the others
/// `datagramSize - 4`. The smallest datagram size is `FrameLayout.minimumDatagramSize` (8): an ack
/// frame must fit. The format itself allows 1-byte fragments (7-byte start, 5-byte continuation
/// frames), which a receiver accepts.
public struct MessageFragmenter: Sendable {
    /// Size of the datagrams the fragments are cut for (clamped to 8...).
    public var maxDatagramSize: Int {
        didSet { maxDatagramSize = max(maxDatagramSize, FrameLayout.minimumDatagramSize) }
    }
    private var reassembler: MessageReassembler

    public init(maxDatagramSize: Int, maxMessageLength: Int = FrameLayout.maxMessageLength) {
        self.maxDatagramSize = max(maxDatagramSize, FrameLayout.minimumDatagramSize)
        self.reassembler = MessageReassembler(maxMessageLength: maxMessageLength)
    }

    /// The fragment of `message` that starts at `offset`, sized for `datagramSize`.
    /// `message` must be 1...65535 bytes and `offset` inside it; `datagramSize` at least 8.
    public static func fragment(of message: [UInt8], at offset: Int, datagramSize: Int) -> Fragment {
        let isStart = offset == 0
        let capacity = max(1, FrameLayout.fragmentCapacity(datagramSize: datagramSize, isStart: isStart))
        let end = min(message.count, offset + capacity)
        return Fragment(messageLength: isStart ? UInt16(truncatingIfNeeded: message.count) : nil,
                        isEnd: end == message.count,
                        bytes: message[offset..<end])
    }

    /// Fragments `unit` (1...maxMessageLength bytes).
    public mutating func encode(_ unit: [UInt8], into output: inout [Fragment]) throws(FramingError) {
        guard !unit.isEmpty else { throw .badLength }
        guard unit.count <= reassembler.maxMessageLength else {
            throw .messageTooLarge(length: unit.count, limit: reassembler.maxMessageLength)
        }
        var offset = 0
        while offset < unit.count {
            let piece = Self.fragment(of: unit, at: offset, datagramSize: maxDatagramSize)
            output.append(piece)
            offset += piece.bytes.count
        }
    }

    /// Reassembles: emits a message when `unit` completes one.
    public mutating func decode(_ unit: Fragment, into output: inout [[UInt8]]) throws(FramingError) {
        if let message = try reassembler.append(unit) { output.append(message) }
    }
}
