import CSodium

/// The ristretto255 prime-order group (RFC 9496) through libsodium's `crypto_core_ristretto255_*`
/// and `crypto_scalarmult_ristretto255`: what CPace-RISTR255-SHA512 (draft-irtf-cfrg-cpace) is
/// built from.
///
/// Points travel as their 32-byte canonical encoding; the identity element encodes as 32 zero
/// bytes. A point derived from a secret (a CPace generator, a shared point) and every scalar are
/// `SecureBytes`. Errors are `SodiumError`: a secret of the wrong length is `.invalidKeyLength`;
/// a point that does not decode, and a multiplication whose input or result is the identity, are
/// `.invalidGroupElement`.
public enum Ristretto255 {
    /// Bytes in an encoded point (`crypto_core_ristretto255_BYTES`).
    public static let pointLength = 32
    /// Bytes in a reduced scalar, little-endian (`crypto_core_ristretto255_SCALARBYTES`).
    public static let scalarLength = 32
    /// Bytes of hash output mapped to a point (`crypto_core_ristretto255_HASHBYTES`).
    public static let hashLength = 64
    /// Bytes of a scalar before reduction modulo the group order
    /// (`crypto_core_ristretto255_NONREDUCEDSCALARBYTES`).
    public static let wideScalarLength = 64
    /// The encoding of the identity element (CPace's `G.I`).
    public static let identity = [UInt8](repeating: 0, count: pointLength)

    /// The point for 64 bytes of uniform hash output (RFC 9496's element derivation,
    /// `crypto_core_ristretto255_from_hash`). Always a valid point; kept secret because a CPace
    /// generator derived from a password is as good as the password to an attacker.
    public static func point(fromHash hash: SecureBytes) throws(SodiumError) -> SecureBytes {
        try LibSodium.ensureInitialized()
        guard hash.count == hashLength else { throw .invalidKeyLength }
        let point = SecureBytes(count: pointLength)
        point.withUnsafeMutableBytes { output in
            hash.withUnsafeBytes { input in
                _ = crypto_core_ristretto255_from_hash(output.cBytes, input.cBytes)
            }
        }
        return point
    }

    /// `wide` (64 bytes, little-endian) modulo the group order: a scalar whose distribution is
    /// uniform up to a bias of about 2^-260 when `wide` is (`crypto_core_ristretto255_scalar_reduce`).
    public static func reduce(wideScalar wide: SecureBytes) throws(SodiumError) -> SecureBytes {
        try LibSodium.ensureInitialized()
        guard wide.count == wideScalarLength else { throw .invalidKeyLength }
        let scalar = SecureBytes(count: scalarLength)
        scalar.withUnsafeMutableBytes { output in
            wide.withUnsafeBytes { input in
                crypto_core_ristretto255_scalar_reduce(output.cBytes, input.cBytes)
            }
        }
        return scalar
    }

    /// `scalar · point` (`crypto_scalarmult_ristretto255`). Throws `.invalidGroupElement` when
    /// `point` is not a canonical encoding, or when the result is the identity (which covers an
    /// identity `point` and a zero scalar): CPace's `scalar_mult_vfy` returning `G.I`.
    /// libsodium clears the scalar's top bit; reduced scalars never have it set.
    public static func multiply(scalar: SecureBytes, point: some Collection<UInt8>) throws(SodiumError) -> SecureBytes {
        try LibSodium.ensureInitialized()
        guard scalar.count == scalarLength else { throw .invalidKeyLength }
        guard point.count == pointLength else { throw .invalidGroupElement }
        let product = SecureBytes(count: pointLength)
        let status = withContiguousBytes(point) { multiply(scalar: scalar, pointBytes: $0, into: product) }
        guard status == 0 else { throw .invalidGroupElement }
        return product
    }

    /// `scalar · point` for a secret point (a CPace generator); as `multiply(scalar:point:)`.
    public static func multiply(scalar: SecureBytes, point: SecureBytes) throws(SodiumError) -> SecureBytes {
        try LibSodium.ensureInitialized()
        guard scalar.count == scalarLength else { throw .invalidKeyLength }
        guard point.count == pointLength else { throw .invalidGroupElement }
        let product = SecureBytes(count: pointLength)
        let status = point.withUnsafeBytes { multiply(scalar: scalar, pointBytes: $0, into: product) }
        guard status == 0 else { throw .invalidGroupElement }
        return product
    }

    /// libsodium's status: 0, or -1 for a point that does not decode or an identity result.
    private static func multiply(scalar: SecureBytes, pointBytes: UnsafeRawBufferPointer, into product: SecureBytes) -> Int32 {
        product.withUnsafeMutableBytes { output in
            scalar.withUnsafeBytes { scalarBytes in
                crypto_scalarmult_ristretto255(output.cBytes, scalarBytes.cBytes, pointBytes.cBytes)
            }
        }
    }

    /// Whether `bytes` is the canonical encoding of a group element
    /// (`crypto_core_ristretto255_is_valid_point`). In libsodium 1.0.18 the identity (32 zero
    /// bytes) counts as valid: CPace's identity check is `multiply`'s, not this.
    public static func isValidPoint(_ bytes: some Collection<UInt8>) -> Bool {
        LibSodium.requireInitialized()
        guard bytes.count == pointLength else { return false }
        return withContiguousBytes(bytes) { crypto_core_ristretto255_is_valid_point($0.cBytes) == 1 }
    }
}
