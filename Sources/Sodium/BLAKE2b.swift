import CSodium

/// BLAKE2b (RFC 7693) through libsodium's `crypto_generichash`, one-shot or streaming.
///
/// Value semantics: the libsodium state (`crypto_generichash_blake2b_state`, 384 bytes that libsodium
/// declares 64-byte aligned) lives in a heap box with that alignment. Copying a `BLAKE2b` shares
/// the box until one copy is updated, which then copies the state first (copy-on-write), so two
/// copies hash independently. The state is wiped when the box goes away (it may hold key
/// material). `finalize()` works on a scratch copy of the state, so the hasher stays usable:
/// calling it again, or after more updates, gives the digest of everything seen so far.
public struct BLAKE2b {
    /// Digest sizes libsodium accepts: 16...64 bytes.
    public static let outputLengthRange = 16...64
    /// Key sizes libsodium accepts: 1...64 bytes (or no key).
    public static let keyLengthRange = 1...64

    public let outputLength: Int
    private var state: StateBox

    /// A hasher producing `outputLength` bytes, keyed with `key` when given.
    /// `outputLength` and the key size are chosen by the programmer, not by input; values outside
    /// `outputLengthRange` / `keyLengthRange` stop the program.
    public init(outputLength: Int = 32, key: SecureBytes? = nil) {
        LibSodium.requireInitialized()
        precondition(Self.outputLengthRange.contains(outputLength), "BLAKE2b output length must be 16...64")
        if let key { precondition(Self.keyLengthRange.contains(key.count), "BLAKE2b key length must be 1...64") }
        self.outputLength = outputLength
        let box = StateBox()
        let status: Int32
        if let key {
            status = key.withUnsafeBytes { keyBytes in
                crypto_generichash_blake2b_init(box.state, keyBytes.cBytes, keyBytes.count, outputLength)
            }
        } else {
            status = crypto_generichash_blake2b_init(box.state, nil, 0, outputLength)
        }
        precondition(status == 0, "crypto_generichash_init rejected checked parameters")
        state = box
    }

    /// Adds bytes; contiguous collections (arrays, slices) are hashed without copying.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        withContiguousBytes(bytes) { update($0) }
    }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        makeStateUnique()
        _ = crypto_generichash_blake2b_update(state.state, buffer.cBytes, UInt64(buffer.count))
    }

    /// The digest of everything added so far.
    public mutating func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: outputLength) { buffer, initialized in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = outputLength
        }
    }

    /// The digest as `SecureBytes`, for digests that are key material (HMAC, HKDF, rekeying).
    public mutating func finalizeSecret() -> SecureBytes {
        let digest = SecureBytes(count: outputLength)
        digest.withUnsafeMutableBytes { finalize(into: $0) }
        return digest
    }

    /// Writes the digest to the first `outputLength` bytes of `output`, which must hold that many.
    private func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= outputLength)
        withUnsafeTemporaryAllocation(byteCount: StateBox.size, alignment: StateBox.alignment) { scratch in
            guard let scratchBase = scratch.baseAddress else { return }
            scratchBase.copyMemory(from: state.raw, byteCount: StateBox.size)
            _ = crypto_generichash_blake2b_final(OpaquePointer(scratchBase), output.cBytes, outputLength)
            sodium_memzero(scratchBase, StateBox.size)
        }
    }

    private mutating func makeStateUnique() {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
    }

    /// One-shot digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>, outputLength: Int = 32, key: SecureBytes? = nil) -> [UInt8] {
        var hasher = BLAKE2b(outputLength: outputLength, key: key)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// One-shot digest kept in `SecureBytes`, for deriving keys.
    public static func secretHash(_ bytes: some Collection<UInt8>, outputLength: Int = 32, key: SecureBytes? = nil) -> SecureBytes {
        var hasher = BLAKE2b(outputLength: outputLength, key: key)
        hasher.update(bytes)
        return hasher.finalizeSecret()
    }
}

/// Heap storage for a `crypto_generichash_blake2b_state` with the alignment libsodium declares.
/// Swift cannot import that over-aligned C struct, so the state is raw memory handed to libsodium
/// as an opaque pointer, sized by `crypto_generichash_blake2b_statebytes()`.
private final class StateBox {
    static let size = crypto_generichash_blake2b_statebytes()
    static let alignment = 64

    let raw: UnsafeMutableRawPointer
    var state: OpaquePointer { OpaquePointer(raw) }

    init() {
        raw = UnsafeMutableRawPointer.allocate(byteCount: Self.size, alignment: Self.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: Self.size)
    }

    func copy() -> StateBox {
        let box = StateBox()
        box.raw.copyMemory(from: raw, byteCount: Self.size)
        return box
    }

    deinit {
        sodium_memzero(raw, Self.size)
        raw.deallocate()
    }
}
