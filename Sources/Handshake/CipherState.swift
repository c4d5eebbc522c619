import Sodium

/// A Noise `CipherState` (spec §5.1) for ChaChaPoly: a 32-byte key (or none) and a 64-bit nonce
/// counter. The 96-bit AEAD nonce is 32 zero bits followed by the counter in little-endian (§12.3).
///
/// blesend's record layer does not use this type (it has its own XChaCha20 nonces); it serves the
/// handshake and checking the transport messages of the Noise test vectors.
public struct CipherState: Sendable {
    private var key: SecureBytes?
    /// The next nonce to use.
    public private(set) var nonce: UInt64 = 0

    /// A cipher state with `key` (nil: no key yet, encryption is the identity, as in the spec).
    public init(key: SecureBytes? = nil) {
        self.key = key
    }

    public var hasKey: Bool { key != nil }

    /// EncryptWithAd: ciphertext ‖ tag, or `plaintext` itself when there is no key.
    public mutating func encrypt(associatedData: [UInt8], plaintext: [UInt8]) throws(HandshakeError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce != .max else { throw .nonceExhausted }
        let sealed: [UInt8]
        do {
            sealed = try AEAD.chaCha20Poly1305IETF.seal(key: key, nonce: Self.nonceBytes(nonce), plaintext: plaintext,
                                                    associatedData: associatedData)
        } catch {
            throw .messageTooLong
        }
        nonce += 1
        return sealed
    }

    /// DecryptWithAd: the plaintext, or `ciphertext` itself when there is no key. On failure the
    /// nonce does not advance.
    public mutating func decrypt(associatedData: [UInt8], ciphertext: some Collection<UInt8>) throws(HandshakeError) -> [UInt8] {
        guard let key else { return Array(ciphertext) }
        guard nonce != .max else { throw .nonceExhausted }
        let opened: [UInt8]
        do {
            opened = try AEAD.chaCha20Poly1305IETF.open(key: key, nonce: Self.nonceBytes(nonce), ciphertext: ciphertext,
                                                    associatedData: associatedData)
        } catch {
            throw .decryptionFailed
        }
        nonce += 1
        return opened
    }

    static func nonceBytes(_ counter: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        return bytes
    }
}
