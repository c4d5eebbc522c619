import Transfer

/// A large file whose bytes are computed from their offset, so that gigabytes can flow through
/// the pipeline without being held anywhere.
public final class PatternFileSource: FileSource {
    public let name: String
    private let length: UInt64

    public init(name: String, size: UInt64) {
        self.name = name
        self.length = size
    }

    public var size: UInt64? { length }

    /// The byte at `offset`: cheap, and not periodic at any small stride.
    public static func byte(at offset: UInt64) -> UInt8 {
        var x = offset &* 0x9E37_79B9_7F4A_7C15
        x ^= x >> 29
        return UInt8(truncatingIfNeeded: x)
    }

    public func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard offset < length else { return [] }
        let n = Int(min(UInt64(count), length - offset))
        return [UInt8](unsafeUninitializedCapacity: n) { buffer, initialized in
            for i in 0..<n { buffer[i] = Self.byte(at: offset + UInt64(i)) }
            initialized = n
        }
    }
}
