import CSodium

/// A fixed-size buffer for secret bytes (keys, chaining keys, DH results).
///
/// The bytes live in their own heap allocation, are wiped with `sodium_memzero` when the object
/// goes away, and never appear in `description`. Equality is constant-time (`sodium_memcmp`) for
/// buffers of equal size; sizes are not secret.
///
/// It is a class, so copies share storage. Code that holds `SecureBytes` inside a value type
/// should replace the object rather than write through `withUnsafeMutableBytes` if it needs
/// value semantics. `@unchecked Sendable`: callers must not mutate one instance from two threads.
public final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// `count` zero bytes.
    public init(count: Int) {
        LibSodium.requireInitialized()
        let size = Swift.max(count, 0)
        // Allocate at least one byte so `baseAddress` is never nil.
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(size, 1), alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        storage = UnsafeMutableRawBufferPointer(rebasing: raw[0..<size])
        allocationBase = raw
    }

    /// A copy of `bytes`. Wiping the source is the caller's business (see `secureZero`).
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count)
        withContiguousBytes(bytes) { source in
            storage.copyMemory(from: source)
        }
    }

    /// `count` bytes from libsodium's CSPRNG.
    public static func random(count: Int) -> SecureBytes {
        let secret = SecureBytes(count: count)
        Random.fill(secret.storage)
        return secret
    }

    private let allocationBase: UnsafeMutableRawBufferPointer

    deinit {
        sodium_memzero(allocationBase.baseAddress, allocationBase.count)
        allocationBase.deallocate()
    }

    public var count: Int { storage.count }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(storage)
    }
}

extension SecureBytes: Equatable {
    /// Constant-time for equal sizes.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        return sodium_memcmp(lhs.storage.baseAddress, rhs.storage.baseAddress, lhs.count) == 0
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecureBytes(\(count) bytes)" }
    public var debugDescription: String { description }
}

/// Overwrites every byte of `bytes` with zero in a way the optimiser may not remove.
public func secureZero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        sodium_memzero(base, buffer.count)
    }
}
