import Sodium

/// The two keys CPace's ISK gives, and the AEAD under them (docs/protocol.md §9):
///
///     k_S = BLAKE2b-256(key: ISK, message: "blesend/1 pair S")     seals P3
///     k_R = BLAKE2b-256(key: ISK, message: "blesend/1 pair R")     seals P2 (nonce 0), P4 (nonce 1)
///
/// XChaCha20-Poly1305 (IETF), associated data P1 ‖ Yb for every message. The 24-byte nonce is
/// built as the record layer builds its own (`RecordKeySchedule`): 16 zero bytes, then the counter
/// as a big-endian u64. One key per direction, and each (key, nonce) seals one message only.
struct PairingCipher {
    /// `k_S`, the sender's direction.
    let senderKey: SecureBytes
    /// `k_R`, the receiver's direction.
    let receiverKey: SecureBytes

    init(intermediateSessionKey isk: SecureBytes) {
        senderKey = BLAKE2b.secretHash(PairingLayout.senderKeyLabel, outputLength: PairingLayout.directionKeyLength, key: isk)
        receiverKey = BLAKE2b.secretHash(PairingLayout.receiverKeyLabel, outputLength: PairingLayout.directionKeyLength, key: isk)
    }

    /// 16 zero bytes ‖ `counter` big-endian.
    static func nonce(counter: UInt64) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: PairingLayout.nonceLength)
        for index in 0..<8 {
            nonce[PairingLayout.nonceLength - 8 + index] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * index))
        }
        return nonce
    }

    /// Ciphertext ‖ tag. Cannot fail with a 32-byte key and the short plaintexts of pairing; were
    /// it to, the step fails as `.malformed` rather than send anything.
    static func seal(
        key: SecureBytes, counter: UInt64, associatedData: [UInt8], plaintext: [UInt8]
    ) throws(PairingError) -> [UInt8] {
        let aead = AEAD.xChaCha20Poly1305IETF
        let nonce = nonce(counter: counter)
        var sealed = [UInt8](repeating: 0, count: plaintext.count + aead.tagLength)
        let written = nonce.withUnsafeBytes { nonceBytes in
            plaintext.withUnsafeBytes { plaintextBytes in
                associatedData.withUnsafeBytes { adBytes in
                    sealed.withUnsafeMutableBytes { output in
                        try? aead.seal(key: key, nonce: nonceBytes, plaintext: plaintextBytes,
                                       associatedData: adBytes, into: output)
                    }
                }
            }
        }
        guard written == sealed.count else { throw .malformed }
        return sealed
    }

    /// The plaintext, or nil if `sealed` does not authenticate under `key`, `counter` and
    /// `associatedData` (no unauthenticated byte is ever returned).
    static func open(key: SecureBytes, counter: UInt64, associatedData: [UInt8], sealed: ArraySlice<UInt8>) -> [UInt8]? {
        let aead = AEAD.xChaCha20Poly1305IETF
        guard sealed.count >= aead.tagLength else { return nil }
        let nonce = nonce(counter: counter)
        var plaintext = [UInt8](repeating: 0, count: sealed.count - aead.tagLength)
        let written = nonce.withUnsafeBytes { nonceBytes in
            sealed.withUnsafeBytes { sealedBytes in
                associatedData.withUnsafeBytes { adBytes in
                    plaintext.withUnsafeMutableBytes { output in
                        try? aead.open(key: key, nonce: nonceBytes, ciphertext: sealedBytes,
                                       associatedData: adBytes, into: output)
                    }
                }
            }
        }
        guard written == plaintext.count else { return nil }
        return plaintext
    }
}
