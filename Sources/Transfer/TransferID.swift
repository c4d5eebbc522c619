import Pipeline

/// Names one file transfer: 16 random bytes chosen by the sender.
///
/// The receiver keys partial transfers by (authenticated sender, id), so an id alone grants nothing.
public struct TransferID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// `bytes` must be exactly 16 bytes long.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == TransferConstants.idLength else { return nil }
        self.bytes = Array(bytes)
    }

    /// An id from two 64-bit halves (always valid).
    public init(halves: (UInt64, UInt64)) {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(halves.0)
        bytes.appendBigEndian(halves.1)
        self.bytes = bytes
    }

    public var description: String {
        bytes.prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
