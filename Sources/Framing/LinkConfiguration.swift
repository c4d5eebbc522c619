/// Tunables of a `ReliableLink` (defaults from docs/protocol.md, "Constants").
public struct LinkConfiguration: Sendable, Equatable {
    /// Unacknowledged data frames in flight per direction, and the receiver's reorder window.
    /// `ReliableLink` clamps it to 1...4096 (selective repeat needs at most half the sequence space).
    public var window: Int
    /// The receiver acknowledges after this many frames (clamped to 1...window).
    public var ackEvery: Int
    /// ... or this long after the first unacknowledged frame.
    public var ackDelay: Duration
    public var initialRTO: Duration
    public var minRTO: Duration
    public var maxRTO: Duration
    /// No progress on the oldest unacknowledged frame for this long: the link is dead.
    public var linkDeadAfter: Duration
    /// Largest message accepted from above or from the peer (clamped to 1...65535).
    public var maxMessageLength: Int

    public init(window: Int = 256,
                ackEvery: Int = 32,
                ackDelay: Duration = .milliseconds(20),
                initialRTO: Duration = .seconds(1),
                minRTO: Duration = .milliseconds(200),
                maxRTO: Duration = .seconds(8),
                linkDeadAfter: Duration = .seconds(20),
                maxMessageLength: Int = 65535) {
        self.window = window
        self.ackEvery = ackEvery
        self.ackDelay = ackDelay
        self.initialRTO = initialRTO
        self.minRTO = minRTO
        self.maxRTO = maxRTO
        self.linkDeadAfter = linkDeadAfter
        self.maxMessageLength = maxMessageLength
    }

    /// The same configuration with every field in its allowed range.
    var clamped: LinkConfiguration {
        var c = self
        c.window = min(max(window, 1), SequenceNumber.modulus / 2)
        c.ackEvery = min(max(ackEvery, 1), c.window)
        c.ackDelay = max(ackDelay, .zero)
        c.minRTO = max(minRTO, .milliseconds(1))
        c.maxRTO = max(maxRTO, c.minRTO)
        c.initialRTO = min(max(initialRTO, c.minRTO), c.maxRTO)
        c.linkDeadAfter = max(linkDeadAfter, .zero)
        c.maxMessageLength = min(max(maxMessageLength, 1), FrameLayout.maxMessageLength)
        return c
    }
}
