import Sodium

/// A Noise `SymmetricState` (spec §5.2): the chaining key `ck`, the handshake hash `h`, and the
/// current `CipherState`. Secrets are `SecureBytes` that are replaced, never written in place, so
/// copies of a handshake value stay independent; the old ones are wiped when released.
struct SymmetricState {
    private(set) var cipher = CipherState()
    private var chainingKey: SecureBytes
    private(set) var handshakeHash: [UInt8]

    /// InitializeSymmetric(protocol_name).
    init(protocolName: [UInt8]) {
        if protocolName.count <= NoiseHash.hashLength {
            handshakeHash = protocolName + [UInt8](repeating: 0, count: NoiseHash.hashLength - protocolName.count)
        } else {
            handshakeHash = NoiseHash.hash { $0.update(protocolName) }
        }
        chainingKey = SecureBytes(copying: handshakeHash)
    }

    /// MixKey(input_key_material).
    mutating func mixKey(_ inputKeyMaterial: SecureBytes) {
        let (newChainingKey, tempKey) = NoiseHash.hkdf2(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial)
        chainingKey = newChainingKey
        cipher = CipherState(key: NoiseHash.truncate(tempKey, to: 32))
    }

    /// MixHash(data).
    mutating func mixHash(_ data: some Collection<UInt8>) {
        let previous = handshakeHash
        handshakeHash = NoiseHash.hash { hasher in
            hasher.update(previous)
            hasher.update(data)
        }
    }

    /// EncryptAndHash(plaintext).
    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(HandshakeError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(associatedData: handshakeHash, plaintext: plaintext)
        mixHash(ciphertext)
        return ciphertext
    }

    /// DecryptAndHash(ciphertext).
    mutating func decryptAndHash(_ ciphertext: ArraySlice<UInt8>) throws(HandshakeError) -> [UInt8] {
        let plaintext = try cipher.decrypt(associatedData: handshakeHash, ciphertext: ciphertext)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): the two transport keys, initiator-to-responder first.
    func split() -> (SecureBytes, SecureBytes) {
        let (first, second) = NoiseHash.hkdf2(chainingKey: chainingKey, inputKeyMaterial: SecureBytes(count: 0))
        return (NoiseHash.truncate(first, to: 32), NoiseHash.truncate(second, to: 32))
    }
}
