/// Joins in-order fragments back into messages, checking the start/end flags and the announced
/// length. Holds at most one open message, never more than `maxMessageLength` bytes.
public struct MessageReassembler: Sendable {
    /// Longest message accepted; a start fragment announcing more ends the connection. It may be
    /// raised while a message is open (a lower limit applies from the next start fragment).
    public var maxMessageLength: Int {
        didSet { maxMessageLength = min(max(maxMessageLength, 1), FrameLayout.maxMessageLength) }
    }
    private var buffer: [UInt8] = []
    private var expectedLength = 0
    private var isOpen = false

    public init(maxMessageLength: Int = FrameLayout.maxMessageLength) {
        self.maxMessageLength = min(max(maxMessageLength, 1), FrameLayout.maxMessageLength)
    }

    /// Whether a message has started and not ended.
    public var hasOpenMessage: Bool { isOpen }

    /// Bytes of the open message received so far.
    public var bufferedBytes: Int { buffer.count }

    /// Memory set aside for the open message: its announced length (reserved at its start).
    public var reservedBytes: Int { isOpen ? max(expectedLength, buffer.count) : 0 }

    /// Takes the next fragment; returns the message it completes, if any.
    public mutating func append(_ fragment: Fragment) throws(FramingError) -> [UInt8]? {
        if let length = fragment.messageLength {
            guard !isOpen else { throw .startInsideMessage }
            let length = Int(length)
            guard length <= maxMessageLength else { throw .messageTooLarge(length: length, limit: maxMessageLength) }
            guard fragment.bytes.count <= length else { throw .messageOverrun }
            if fragment.isEnd {
                guard fragment.bytes.count == length else { throw .lengthMismatch }
                return Array(fragment.bytes)
            }
            guard fragment.bytes.count < length else { throw .lengthMismatch }
            isOpen = true
            expectedLength = length
            buffer = []
            buffer.reserveCapacity(length)
            buffer.append(contentsOf: fragment.bytes)
            return nil
        }
        guard isOpen else { throw .continuationWithoutStart }
        let total = buffer.count + fragment.bytes.count
        guard total <= expectedLength else { throw .messageOverrun }
        guard fragment.isEnd == (total == expectedLength) else { throw .lengthMismatch }
        buffer.append(contentsOf: fragment.bytes)
        guard fragment.isEnd else { return nil }
        isOpen = false
        defer { buffer = [] }
        return buffer
    }
}
