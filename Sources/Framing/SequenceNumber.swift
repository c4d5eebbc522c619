/// A 13-bit frame sequence number (docs/protocol.md §2): arithmetic is modulo 8192.
public struct SequenceNumber: Hashable, Sendable, CustomStringConvertible {
    /// Sequence numbers run 0..<modulus.
    public static let modulus = 8192

    /// The number, always in 0..<8192.
    public let value: UInt16

    /// `value` reduced modulo 8192 (negative values wrap too).
    public init(_ value: Int) {
        let reduced = value % Self.modulus
        self.value = UInt16(truncatingIfNeeded: reduced < 0 ? reduced + Self.modulus : reduced)
    }

    public static let zero = SequenceNumber(0)

    /// The number `count` steps further on (or back, if negative), wrapping.
    public func advanced(by count: Int) -> SequenceNumber {
        SequenceNumber(Int(value) + count % Self.modulus)
    }

    /// Forward distance from `self` to `other`, in 0..<8192: `(other - self) mod 8192`.
    public func distance(to other: SequenceNumber) -> Int {
        let d = Int(other.value) - Int(value)
        return d < 0 ? d + Self.modulus : d
    }

    /// Whether `self` lies in the `count` numbers starting at `start` (wrapping).
    public func isWithin(_ count: Int, from start: SequenceNumber) -> Bool {
        start.distance(to: self) < count
    }

    public var description: String { "#\(value)" }
}
