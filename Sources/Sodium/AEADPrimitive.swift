import CSodium

/// The shape shared by libsodium's IETF ChaCha20-Poly1305 and XChaCha20-Poly1305 functions, so
/// that the two public AEAD enums share one checked implementation.
struct AEADPrimitive {
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

    let keyLength: Int
    let nonceLength: Int
    let tagLength: Int
    let maxMessageLength: Int
    let encrypt: Encrypt
    let decrypt: Decrypt

    /// Seals into `output`, which needs `plaintext.count + tagLength` bytes; returns that count.
    func seal(
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

    /// Opens into `output`, which needs `ciphertext.count - tagLength` bytes; returns that count.
    /// `output` is left zeroed when authentication fails.
    func open(
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

    func seal(
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

    func open(
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
