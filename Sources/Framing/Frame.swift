/// One piece of a message, as carried by one data frame.
public struct Fragment: Equatable, Sendable {
    /// Set on the first fragment of a message (the `S` flag): the whole message's length.
    public var messageLength: UInt16?
    /// The `E` flag: this fragment carries the message's last byte.
    public var isEnd: Bool
    /// The fragment's bytes (never empty on the wire).
    public var bytes: ArraySlice<UInt8>

    public init(messageLength: UInt16?, isEnd: Bool, bytes: ArraySlice<UInt8>) {
        self.messageLength = messageLength
        self.isEnd = isEnd
        self.bytes = bytes
    }

    /// The `S` flag.
    public var isStart: Bool { messageLength != nil }

    /// Bytes this fragment takes in a datagram, framing included.
    public var encodedSize: Int {
        FrameLayout.overhead + (isStart ? FrameLayout.lengthSize : 0) + bytes.count
    }
}

/// One datagram's content.
public enum Frame: Equatable, Sendable {
    /// A data frame: one fragment with its sequence number.
    case data(sequence: SequenceNumber, fragment: Fragment)
    /// An ack frame: the next sequence number expected, and a bitmap of which frames after it
    /// arrived: bit i (least significant first) of byte j set means `cumulative + 1 + 8j + i` was
    /// received. Trailing zero bytes are not sent, so the bitmap is often empty.
    case ack(cumulative: SequenceNumber, selectiveAcks: [UInt8])
}
