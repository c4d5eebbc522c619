import CSodium

/// Curve25519 Diffie-Hellman (RFC 7748) through libsodium's `crypto_scalarmult`.
public enum X25519 {
    /// Bytes in a secret key, a public key and a shared secret.
    public static let keyLength = 32

    /// A fresh random secret key (libsodium clamps it when used).
    public static func generateSecretKey() -> SecureBytes {
        SecureBytes.random(count: keyLength)
    }

    /// The public key for `secret` (`crypto_scalarmult_base`).
    public static func publicKey(for secret: SecureBytes) throws -> [UInt8] {
        try LibSodium.ensureInitialized()
        guard secret.count == keyLength else { throw SodiumError.invalidKeyLength }
        var publicKey = [UInt8](repeating: 0, count: keyLength)
        let status = publicKey.withUnsafeMutableBytes { output in
            secret.withUnsafeBytes { scalar in
                crypto_scalarmult_base(output.cBytes, scalar.cBytes)
            }
        }
        guard status == 0 else { throw SodiumError.weakPublicKey }
        return publicKey
    }

    /// The shared secret between `secret` and the peer's `publicKey`.
    /// Throws `.weakPublicKey` when the result would be all zero (a low-order peer key).
    public static func sharedSecret(secret: SecureBytes, publicKey: some Collection<UInt8>) throws -> SecureBytes {
        try LibSodium.ensureInitialized()
        guard secret.count == keyLength, publicKey.count == keyLength else { throw SodiumError.invalidKeyLength }
        let shared = SecureBytes(count: keyLength)
        let status = withContiguousBytes(publicKey) { point in
            shared.withUnsafeMutableBytes { output in
                secret.withUnsafeBytes { scalar in
                    crypto_scalarmult(output.cBytes, scalar.cBytes, point.cBytes)
                }
            }
        }
        guard status == 0 else { throw SodiumError.weakPublicKey }
        return shared
    }
}
