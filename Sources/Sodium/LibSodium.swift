import CSodium

/// One-time, thread-safe `sodium_init`.
///
/// Swift runs a global or static `let` initialiser exactly once, guarded by `swift_once`, so
/// `isReady` is the lazily computed result of the single `sodium_init` call. Every public entry
/// point of this module goes through `ensureInitialized()` (throwing APIs) or
/// `requireInitialized()` (the few non-throwing ones: random bytes, key generation, hashing).
enum LibSodium {
    /// `sodium_init` returns 0 on first success, 1 if already initialised, -1 on failure.
    static let isReady: Bool = sodium_init() >= 0

    static func ensureInitialized() throws(SodiumError) {
        guard isReady else { throw .initializationFailed }
    }

    /// For non-throwing entry points. Without `sodium_init` the random generator cannot be trusted,
    /// so carrying on would be worse than stopping; on Linux this fails only without /dev/urandom.
    static func requireInitialized() {
        precondition(isReady, "libsodium could not be initialised (sodium_init failed)")
    }
}

/// Runs `body` with the bytes of `collection` as a contiguous raw buffer, copying only when the
/// collection has no contiguous storage of its own.
@inline(__always)
func withContiguousBytes<C: Collection<UInt8>, R>(
    _ collection: C, _ body: (UnsafeRawBufferPointer) throws -> R
) rethrows -> R {
    if let result = try collection.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    // A collection with no contiguous storage is copied; the copy may be secret, so it is wiped.
    var copy = Array(collection)
    defer { secureZero(&copy) }
    return try copy.withUnsafeBytes(body)
}

/// A readable byte that stands in for the base address of an empty buffer, so that libsodium
/// never sees a null pointer (some of its functions do not accept NULL even with length 0).
nonisolated(unsafe) private let emptyBufferStandIn: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()

extension UnsafeRawBufferPointer {
    /// The base address as `unsigned char *`, never null.
    var cBytes: UnsafePointer<UInt8> {
        guard let base = baseAddress else { return UnsafePointer(emptyBufferStandIn) }
        return base.assumingMemoryBound(to: UInt8.self)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The base address as `unsigned char *`, never null.
    var cBytes: UnsafeMutablePointer<UInt8> {
        guard let base = baseAddress else { return emptyBufferStandIn }
        return base.assumingMemoryBound(to: UInt8.self)
    }
}
