import Sodium

/// Our own key pair: the X25519 secret key (kept in `SecureBytes`, wiped when released) and its
/// public key.
public struct Identity: Sendable {
    public let secretKey: SecureBytes
    public let publicKey: PublicKey

    public init(secretKey: SecureBytes) throws(KeyError) {
        guard secretKey.count == KeyText.keyLength,
              let bytes = try? X25519.publicKey(for: secretKey),
              let publicKey = PublicKey(bytes: bytes) else {
            throw KeyError(.badEncoding, "the secret key is not a valid X25519 key")
        }
        self.secretKey = secretKey
        self.publicKey = publicKey
    }

    /// A fresh key pair from libsodium's random generator.
    public static func generate() -> Identity {
        // A random 32-byte X25519 secret is always valid (clamping happens inside scalarmult).
        // swiftlint:disable:next force_try
        try! Identity(secretKey: X25519.generateSecretKey())
    }

    /// Parses the secret key's one-line text form (`blesend-sec1:…`). Works on `secretText` where
    /// it is (trimmed as a slice, decoded in place): no copy of the text is made, so wiping the
    /// caller's buffer (`secureZero`) afterwards leaves none behind.
    public init(secretText: some Collection<UInt8>) throws(KeyError) {
        let secret = try KeyText.decode(prefix: KeyText.secretPrefix, text: secretText.trimmedASCIIWhitespace(), what: "secret key")
        try self.init(secretKey: secret)
    }

    /// The secret key's text form as bytes; the caller wipes them (`secureZero`) after use. There
    /// is no `String` form: a string cannot be wiped.
    public func secretTextBytes() -> [UInt8] { KeyText.encodedBytes(prefix: KeyText.secretPrefix, key: secretKey) }
}
