/// Everything the libsodium wrapper can throw. Deliberately coarse: an AEAD failure never says why.
public enum SodiumError: Error, Equatable, Sendable {
    /// `sodium_init` failed; no primitive can be used safely.
    case initializationFailed
    /// A key had the wrong number of bytes for the primitive.
    case invalidKeyLength
    /// A nonce had the wrong number of bytes for the primitive.
    case invalidNonceLength
    /// An AEAD ciphertext did not authenticate (wrong key, nonce, associated data, or tampering).
    case authenticationFailed
    /// X25519 with this public key gives the all-zero shared secret (a low-order point).
    case weakPublicKey
    /// A ristretto255 encoding that is not a canonical group element, or a scalar multiplication
    /// whose input or result is the identity element (the checks CPace's `scalar_mult_vfy` asks for).
    case invalidGroupElement
    /// The message is longer than the primitive allows.
    case messageTooLong
    /// A caller-provided output buffer cannot hold the result.
    case outputBufferTooSmall
}
