/// Counters of one `ReliableLink`.
public struct LinkStatistics: Sendable, Equatable {
    /// New data frames (first transmissions).
    public var dataFramesSent = 0
    /// Data frames sent again (timeout or fast retransmit).
    public var retransmissions = 0
    /// Of `retransmissions`, those triggered by an ack's selective-ack bitmap.
    public var fastRetransmissions = 0
    /// Retransmission timer expiries that doubled the RTO.
    public var timeouts = 0
    public var acksSent = 0
    /// Every datagram returned by `nextDatagram`.
    public var datagramsSent = 0
    public var datagramBytesSent = 0
    /// Fragment bytes in new data frames (not counting retransmissions).
    public var payloadBytesSent = 0
    /// Every datagram handed to `receive`.
    public var datagramsReceived = 0
    public var datagramBytesReceived = 0
    /// Frames that decoded (data and ack).
    public var framesReceived = 0
    public var acksReceived = 0
    /// Bad CRC, truncated, reserved bits, bad length, empty fragment.
    public var droppedCorrupt = 0
    /// Data frames received before (already delivered or already buffered).
    public var droppedDuplicate = 0
    /// Data frames outside the receive window, and acks that acknowledge nothing in flight.
    public var droppedOutOfWindow = 0
    public var messagesDelivered = 0
    /// Most out-of-order frames buffered at once (never above the window).
    public var maxReorderBuffered = 0

    public init() {}
}
