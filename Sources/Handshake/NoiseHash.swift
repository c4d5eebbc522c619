import Sodium

/// The hash functions of the Noise spec (rev 34, §4.3 and §5) for `BLAKE2b`:
/// HASH = BLAKE2b-512, HMAC-HASH per RFC 2104 with BLOCKLEN = 128, and HKDF as Noise defines it.
/// Every primitive is libsodium's BLAKE2b; only the HMAC/HKDF constructions are written here.
enum NoiseHash {
    static let hashLength = 64
    static let blockLength = 128

    /// HASH(data) where data is fed by `feed`.
    static func hash(_ feed: (inout BLAKE2b) -> Void) -> [UInt8] {
        var hasher = BLAKE2b(outputLength: hashLength)
        feed(&hasher)
        return hasher.finalize()
    }

    /// HMAC-HASH(key, data) (RFC 2104). `key` is at most `blockLength` bytes (Noise keys are 64).
    static func hmac(key: SecureBytes, _ feed: (inout BLAKE2b) -> Void) -> SecureBytes {
        precondition(key.count <= blockLength, "Noise HMAC keys are HASHLEN bytes")
        let innerPad = SecureBytes(count: blockLength)
        let outerPad = SecureBytes(count: blockLength)
        key.withUnsafeBytes { keyBytes in
            innerPad.withUnsafeMutableBytes { inner in
                outerPad.withUnsafeMutableBytes { outer in
                    for index in 0..<blockLength {
                        let byte: UInt8 = index < keyBytes.count ? keyBytes[index] : 0
                        inner[index] = byte ^ 0x36
                        outer[index] = byte ^ 0x5c
                    }
                }
            }
        }
        var inner = BLAKE2b(outputLength: hashLength)
        innerPad.withUnsafeBytes { inner.update($0) }
        feed(&inner)
        let innerDigest = inner.finalizeSecret()

        var outer = BLAKE2b(outputLength: hashLength)
        outerPad.withUnsafeBytes { outer.update($0) }
        innerDigest.withUnsafeBytes { outer.update($0) }
        return outer.finalizeSecret()
    }

    /// HKDF(chaining_key, input_key_material, 2): two HASHLEN outputs.
    static func hkdf2(chainingKey: SecureBytes, inputKeyMaterial: SecureBytes) -> (SecureBytes, SecureBytes) {
        let tempKey = hmac(key: chainingKey) { hasher in inputKeyMaterial.withUnsafeBytes { hasher.update($0) } }
        let output1 = hmac(key: tempKey) { $0.update(CollectionOfOne(UInt8(0x01))) }
        let output2 = hmac(key: tempKey) { hasher in
            output1.withUnsafeBytes { hasher.update($0) }
            hasher.update(CollectionOfOne(UInt8(0x02)))
        }
        return (output1, output2)
    }

    /// The first `count` bytes of `secret`, as a new secret.
    static func truncate(_ secret: SecureBytes, to count: Int) -> SecureBytes {
        let result = SecureBytes(count: count)
        secret.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[..<count])) }
        }
        return result
    }
}
