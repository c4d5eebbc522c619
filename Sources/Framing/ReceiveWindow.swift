import DequeModule

/// The receiver's half of selective repeat (docs/protocol.md §2): accepts data frames inside its
/// window, holds those that arrive early, hands fragments to the reassembler in sequence order,
/// queues the messages they complete, and describes what it holds as a selective-ack bitmap.
struct ReceiveWindow {
    /// What became of one data frame.
    enum Arrival: Equatable {
        /// Received before (delivered, or held already); the peer should hear an ack at once.
        case duplicate
        /// Outside the window and not a recent duplicate: dropped without an ack.
        case outOfWindow
        /// Accepted. `ackAtOnce`: it filled the gap at the front, or opened a new gap.
        case accepted(ackAtOnce: Bool)
    }

    /// Frames accepted from `next` on (1...capacity).
    var limit: Int {
        didSet { limit = min(max(limit, 1), capacity) }
    }
    /// The next sequence number expected: the cumulative ack.
    private(set) var next = SequenceNumber.zero

    /// Ring of `capacity` slots indexed by offset from `next`; `slots[head]` is for `next`.
    private var slots: [Fragment?]
    private var head = 0
    /// Frames held out of order.
    private(set) var bufferedFrames = 0
    /// Fragment bytes held out of order.
    private(set) var bufferedFragmentBytes = 0

    private var reassembler: MessageReassembler
    private var messages = Deque<[UInt8]>()
    private var messageBytes = 0
    /// Messages completed since the start.
    private(set) var messagesDelivered = 0

    init(capacity: Int, maxMessageLength: Int) {
        self.limit = capacity
        self.slots = Array(repeating: nil, count: capacity)
        self.reassembler = MessageReassembler(maxMessageLength: maxMessageLength)
    }

    /// Slots of the reorder buffer (the largest window).
    var capacity: Int { slots.count }

    /// The longest message accepted (see `MessageReassembler.maxMessageLength`).
    var maxMessageLength: Int {
        get { reassembler.maxMessageLength }
        set { reassembler.maxMessageLength = newValue }
    }

    /// Bytes held: fragments out of order, the open message's reservation, complete messages.
    var bufferedBytes: Int {
        bufferedFragmentBytes + reassembler.reservedBytes + messageBytes
    }

    /// Takes the data frame `sequence`. Throws when the fragments, in order, break the message
    /// rules (only a broken or hostile peer does that).
    mutating func receive(sequence: SequenceNumber, fragment: Fragment) throws(FramingError) -> Arrival {
        let offset = next.distance(to: sequence)
        guard offset < limit else {
            // Up to `capacity` behind `next`: delivered already (our ack was probably lost).
            return sequence.distance(to: next) <= capacity ? .duplicate : .outOfWindow
        }
        if offset == 0 {
            try deliver(fragment)
            advance()
            var filledGap = false
            while let held = slots[head] {
                slots[head] = nil
                bufferedFrames -= 1
                bufferedFragmentBytes -= held.bytes.count
                try deliver(held)
                advance()
                filledGap = true
            }
            return .accepted(ackAtOnce: filledGap)
        }
        let index = slot(offset)
        guard slots[index] == nil else { return .duplicate }
        slots[index] = fragment
        bufferedFrames += 1
        bufferedFragmentBytes += fragment.bytes.count
        // A frame that opens a new gap is reported at once (it drives fast retransmit);
        // later frames of the same run wait for the usual ack.
        return .accepted(ackAtOnce: offset == 1 || slots[slot(offset - 1)] == nil)
    }

    /// The next complete message, in order.
    mutating func nextMessage() -> [UInt8]? {
        guard let message = messages.popFirst() else { return nil }
        messageBytes -= message.count
        return message
    }

    /// Which frames after `next` are held, up to the last one, in as few bytes as that takes:
    /// bit i of byte j is frame `next + 1 + 8j + i`. At most `maxBytes` bytes, and no bits beyond
    /// the window.
    func selectiveAckBitmap(maxBytes: Int) -> [UInt8] {
        guard bufferedFrames > 0 else { return [] }
        let reach = min(capacity - 1, maxBytes * 8)
        var bitmap = [UInt8](repeating: 0, count: (reach + 7) / 8)
        var used = 0
        for bit in 0..<reach where slots[slot(bit + 1)] != nil {
            bitmap[bit >> 3] |= 1 << UInt8(bit & 7)
            used = (bit >> 3) + 1
        }
        bitmap.removeLast(bitmap.count - used)
        return bitmap
    }

    private func slot(_ offset: Int) -> Int {
        (head + offset) % capacity
    }

    private mutating func deliver(_ fragment: Fragment) throws(FramingError) {
        if let message = try reassembler.append(fragment) {
            messages.append(message)
            messageBytes += message.count
            messagesDelivered += 1
        }
    }

    private mutating func advance() {
        next = next.advanced(by: 1)
        head = (head + 1) % capacity
    }
}
