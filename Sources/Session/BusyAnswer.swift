import Pipeline

/// What a receiver at its cap tells a sender in message 2 instead of answering its opening
/// (`busy`, docs/protocol.md §8.6): when to come back, and how many senders were told so before it.
public struct BusyAnswer: Equatable, Sendable {
    /// At least 1 s.
    public let retryAfterSeconds: UInt16
    public let ahead: UInt8

    /// Exactly these fields (a wire vector's, which another receiver may have written).
    public init(retryAfterSeconds: UInt16, ahead: UInt8) {
        self.retryAfterSeconds = retryAfterSeconds
        self.ahead = ahead
    }

    /// What blerecv says: `retryAfter` rounded up to whole seconds, at least 1 and at most
    /// `maxRetryAfterSeconds`; `ahead` at most 255.
    public init(retryAfter: Duration, ahead: Int) {
        let seconds = (retryAfter.seconds).rounded(.up)
        self.init(retryAfterSeconds: UInt16(min(max(seconds, 1), Double(Self.maxRetryAfterSeconds))),
                  ahead: UInt8(min(max(ahead, 0), Int(UInt8.max))))
    }

    /// The longest wait a blesend receiver asks for.
    public static let maxRetryAfterSeconds: UInt16 = 60
}
