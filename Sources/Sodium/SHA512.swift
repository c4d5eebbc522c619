import CSodium

/// SHA-512 (FIPS 180-4) through libsodium's `crypto_hash_sha512`, one-shot or streaming: the hash
/// of CPace-RISTR255-SHA512.
///
/// Value semantics as `BLAKE2b`: the state lives in a heap box that copies are given their own
/// of before they are updated (copy-on-write), and is wiped when the box goes away (it may have
/// seen a password or a shared secret). `finalize()` works on a scratch copy, so the hasher stays
/// usable.
public struct SHA512 {
    /// Bytes in a digest.
    public static let outputLength = 64
    /// Bytes in one input block (CPace's `H.s_in_bytes`).
    public static let blockLength = 128

    private var state: SHA512StateBox

    public init() {
        LibSodium.requireInitialized()
        let box = SHA512StateBox()
        _ = crypto_hash_sha512_init(box.state)
        state = box
    }

    /// Adds bytes; contiguous collections are hashed without copying.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        withContiguousBytes(bytes) { update($0) }
    }

    /// Adds secret bytes where they are.
    public mutating func update(_ secret: SecureBytes) {
        secret.withUnsafeBytes { update($0) }
    }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        _ = crypto_hash_sha512_update(state.state, buffer.cBytes, UInt64(buffer.count))
    }

    /// The digest of everything added so far.
    public mutating func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.outputLength) { buffer, initialized in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = Self.outputLength
        }
    }

    /// The digest as `SecureBytes`, for digests that are key material.
    public mutating func finalizeSecret() -> SecureBytes {
        let digest = SecureBytes(count: Self.outputLength)
        digest.withUnsafeMutableBytes { finalize(into: $0) }
        return digest
    }

    private func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= Self.outputLength)
        let scratch = state.copy()
        _ = crypto_hash_sha512_final(scratch.state, output.cBytes)
    }

    /// One-shot digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA512()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// One-shot digest kept in `SecureBytes`.
    public static func secretHash(_ bytes: some Collection<UInt8>) -> SecureBytes {
        var hasher = SHA512()
        hasher.update(bytes)
        return hasher.finalizeSecret()
    }
}

/// Heap storage for a `crypto_hash_sha512_state`, sized by `crypto_hash_sha512_statebytes()`,
/// wiped when released.
private final class SHA512StateBox {
    static let size = crypto_hash_sha512_statebytes()

    let raw: UnsafeMutableRawPointer
    var state: UnsafeMutablePointer<crypto_hash_sha512_state> { raw.assumingMemoryBound(to: crypto_hash_sha512_state.self) }

    init() {
        raw = UnsafeMutableRawPointer.allocate(byteCount: Self.size, alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: Self.size)
    }

    func copy() -> SHA512StateBox {
        let box = SHA512StateBox()
        box.raw.copyMemory(from: raw, byteCount: Self.size)
        return box
    }

    deinit {
        sodium_memzero(raw, Self.size)
        raw.deallocate()
    }
}
