/// Sizes of the frame format (docs/protocol.md §2).
public enum FrameLayout {
    /// Two header bytes: K, S, E flags and the 13-bit sequence number.
    public static let headerSize = 2
    /// The trailing CRC-16.
    public static let crcSize = 2
    /// The `u16` message length at the front of a start frame's body.
    public static let lengthSize = 2
    /// Header + CRC: what every frame costs.
    public static let overhead = headerSize + crcSize
    /// An ack frame without a bitmap: header and CRC.
    public static let ackFrameBaseSize = overhead
    /// The longest selective-ack bitmap: the largest window (4096 frames) in bits.
    public static let maxSelectiveAckBytes = 512
    /// Smallest continuation frame (one fragment byte).
    public static let minimumDataFrameSize = overhead + 1
    /// Smallest start frame (length + one fragment byte).
    public static let minimumStartFrameSize = overhead + lengthSize + 1
    /// The smallest datagram size a link works with: an ack with a 32-frame bitmap must fit.
    public static let minimumDatagramSize = 8
    /// Largest message length the format can announce.
    public static let maxMessageLength = 65535

    /// Fragment bytes a frame of `datagramSize` carries.
    public static func fragmentCapacity(datagramSize: Int, isStart: Bool) -> Int {
        datagramSize - overhead - (isStart ? lengthSize : 0)
    }
}
