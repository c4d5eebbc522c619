import CSodium

/// ChaCha20-Poly1305 AEAD, 24-byte nonce; what the blesend record layer uses (draft-irtf-cfrg-xchacha).
/// Sealed output is ciphertext followed by the 16-byte tag. Errors are `SodiumError`.
public enum XChaCha20Poly1305IETF {
    public static let keyLength = 32
    public static let nonceLength = 24
    public static let tagLength = 16

    static let primitive = AEADPrimitive(
        keyLength: keyLength, nonceLength: nonceLength, tagLength: tagLength,
        // size_t is imported as Int, so reinterpret before clamping (XChaCha's limit is SIZE_MAX - 16).
        maxMessageLength: Int(clamping: UInt(bitPattern: crypto_aead_xchacha20poly1305_ietf_messagebytes_max())),
        encrypt: crypto_aead_xchacha20poly1305_ietf_encrypt, decrypt: crypto_aead_xchacha20poly1305_ietf_decrypt)

    /// Ciphertext ‖ tag.
    public static func seal(
        key: SecureBytes, nonce: some Collection<UInt8>, plaintext: some Collection<UInt8>,
        associatedData: some Collection<UInt8>
    ) throws -> [UInt8] {
        try primitive.seal(key: key, nonce: nonce, plaintext: plaintext, associatedData: associatedData)
    }

    /// The plaintext; throws `.authenticationFailed` if anything was altered.
    public static func open(
        key: SecureBytes, nonce: some Collection<UInt8>, ciphertext: some Collection<UInt8>,
        associatedData: some Collection<UInt8>
    ) throws -> [UInt8] {
        try primitive.open(key: key, nonce: nonce, ciphertext: ciphertext, associatedData: associatedData)
    }

    /// No-allocation seal: writes ciphertext ‖ tag (`plaintext.count + tagLength` bytes) to the
    /// start of `output` and returns that count.
    public static func seal(
        key: SecureBytes, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws -> Int {
        try primitive.seal(key: key, nonce: nonce, plaintext: plaintext, associatedData: associatedData, into: output)
    }

    /// No-allocation open: writes the plaintext (`ciphertext.count - tagLength` bytes) to the
    /// start of `output` and returns that count. On failure `output` holds zeros, never
    /// unauthenticated plaintext.
    public static func open(
        key: SecureBytes, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws -> Int {
        try primitive.open(key: key, nonce: nonce, ciphertext: ciphertext, associatedData: associatedData, into: output)
    }
}
