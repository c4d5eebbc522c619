import CSodium

/// One of libsodium's IETF ChaCha20-Poly1305 AEADs, with one checked implementation for both:
/// - `.chaCha20Poly1305IETF`: 12-byte nonce; what Noise's ChaChaPoly uses (RFC 8439).
/// - `.xChaCha20Poly1305IETF`: 24-byte nonce; what the blesend record layer uses (draft-irtf-cfrg-xchacha).
/// Sealed output is ciphertext followed by the 16-byte tag. Errors are `SodiumError`.
public struct AEAD: Sendable {
    typealias Encrypt = @convention(c) (
        UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt64>?,
        UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UInt64,
        UnsafePointer<UInt8>?, UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32
    typealias Decrypt = @convention(c) (
        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>?, UInt64,
        UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32

    public let keyLength: Int
    public let nonceLength: Int
    public let tagLength: Int
    let maxMessageLength: Int
    private let encrypt: Encrypt
    private let decrypt: Decrypt

    public static let chaCha20Poly1305IETF = AEAD(
        keyLength: 32, nonceLength: 12, tagLength: 16,
        // size_t is imported as Int, so reinterpret before clamping (XChaCha's limit is SIZE_MAX - 16).
        maxMessageLength: Int(clamping: UInt(bitPattern: crypto_aead_chacha20poly1305_ietf_messagebytes_max())),
        encrypt: crypto_aead_chacha20poly1305_ietf_encrypt, decrypt: crypto_aead_chacha20poly1305_ietf_decrypt)

    public static let xChaCha20Poly1305IETF = AEAD(
        keyLength: 32, nonceLength: 24, tagLength: 16,
        maxMessageLength: Int(clamping: UInt(bitPattern: crypto_aead_xchacha20poly1305_ietf_messagebytes_max())),
        encrypt: crypto_aead_xchacha20poly1305_ietf_encrypt, decrypt: crypto_aead_xchacha20poly1305_ietf_decrypt)

    /// No-allocation seal: writes ciphertext ‖ tag (`plaintext.count + tagLength` bytes) to the
    /// start of `output` and returns that count.
    public func seal(
        key: SecureBytes, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) -> Int {
        try LibSodium.ensureInitialized()
        guard key.count == keyLength else { throw .invalidKeyLength }
        guard nonce.count == nonceLength else { throw .invalidNonceLength }
        guard plaintext.count <= maxMessageLength else { throw .messageTooLong }
        let sealedLength = plaintext.count + tagLength
        guard output.count >= sealedLength else { throw .outputBufferTooSmall }
        var written: UInt64 = 0
        let status = key.withUnsafeBytes { keyBytes in
            encrypt(output.cBytes, &written, plaintext.cBytes, UInt64(plaintext.count),
                    associatedData.cBytes, UInt64(associatedData.count), nil, nonce.cBytes, keyBytes.cBytes)
        }
        guard status == 0, written == UInt64(sealedLength) else { throw .messageTooLong }
        return sealedLength
    }

    /// No-allocation open: writes the plaintext (`ciphertext.count - tagLength` bytes) to the
    /// start of `output` and returns that count. On failure `output` holds zeros, never
    /// unauthenticated plaintext.
    public func open(
        key: SecureBytes, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) -> Int {
        try LibSodium.ensureInitialized()
        guard key.count == keyLength else { throw .invalidKeyLength }
        guard nonce.count == nonceLength else { throw .invalidNonceLength }
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        let openedLength = ciphertext.count - tagLength
        guard output.count >= openedLength else { throw .outputBufferTooSmall }
        var written: UInt64 = 0
        let status = key.withUnsafeBytes { keyBytes in
            decrypt(output.cBytes, &written, nil, ciphertext.cBytes, UInt64(ciphertext.count),
                    associatedData.cBytes, UInt64(associatedData.count), nonce.cBytes, keyBytes.cBytes)
        }
        guard status == 0, written == UInt64(openedLength) else {
            if openedLength > 0 { sodium_memzero(output.cBytes, openedLength) }
            throw .authenticationFailed
        }
        return openedLength
    }

    /// Ciphertext ‖ tag.
    public func seal(
        key: SecureBytes, nonce: some Collection<UInt8>, plaintext: some Collection<UInt8>,
        associatedData: some Collection<UInt8>
    ) throws -> [UInt8] {
        guard plaintext.count <= maxMessageLength else { throw SodiumError.messageTooLong }
        let sealedLength = plaintext.count + tagLength
        return try withContiguousBytes(nonce) { nonceBytes in
            try withContiguousBytes(plaintext) { plaintextBytes in
                try withContiguousBytes(associatedData) { adBytes in
                    try [UInt8](unsafeUninitializedCapacity: sealedLength) { buffer, initialized in
                        initialized = try seal(key: key, nonce: nonceBytes, plaintext: plaintextBytes,
                                               associatedData: adBytes, into: UnsafeMutableRawBufferPointer(buffer))
                    }
                }
            }
        }
    }

    /// The plaintext; throws `.authenticationFailed` if anything was altered.
    public func open(
        key: SecureBytes, nonce: some Collection<UInt8>, ciphertext: some Collection<UInt8>,
        associatedData: some Collection<UInt8>
    ) throws -> [UInt8] {
        guard ciphertext.count >= tagLength else {
            // Report key and nonce problems before the authentication failure, as for longer input.
            guard key.count == keyLength else { throw SodiumError.invalidKeyLength }
            guard nonce.count == nonceLength else { throw SodiumError.invalidNonceLength }
            throw SodiumError.authenticationFailed
        }
        let openedLength = ciphertext.count - tagLength
        return try withContiguousBytes(nonce) { nonceBytes in
            try withContiguousBytes(ciphertext) { ciphertextBytes in
                try withContiguousBytes(associatedData) { adBytes in
                    try [UInt8](unsafeUninitializedCapacity: openedLength) { buffer, initialized in
                        initialized = try open(key: key, nonce: nonceBytes, ciphertext: ciphertextBytes,
                                               associatedData: adBytes, into: UnsafeMutableRawBufferPointer(buffer))
                    }
                }
            }
        }
    }
}
