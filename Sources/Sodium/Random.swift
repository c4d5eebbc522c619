import CSodium

/// libsodium's CSPRNG (`randombytes_buf`: getrandom(2) on Linux).
public enum Random {
    /// `count` random bytes (an empty array for `count <= 0`).
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        LibSodium.requireInitialized()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    /// A uniformly distributed number in `0..<upperBound` (`randombytes_uniform`: rejection
    /// sampling, no modulo bias). 0 for an `upperBound` below 2.
    public static func uniform(_ upperBound: UInt32) -> UInt32 {
        LibSodium.requireInitialized()
        return randombytes_uniform(upperBound)
    }
}
