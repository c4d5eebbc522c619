/// One record's content, as the transfer layer sees it.
public struct Record: Equatable, Sendable {
    public var plaintext: [UInt8]
    /// The last record this side sends in the session.
    public var isFinal: Bool

    public init(plaintext: [UInt8], isFinal: Bool = false) {
        self.plaintext = plaintext
        self.isFinal = isFinal
    }
}
