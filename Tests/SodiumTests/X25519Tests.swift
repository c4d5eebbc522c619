import Sodium
import TestSupport
import Testing

@Suite struct X25519Tests {
    // RFC 7748, section 6.1 (Curve25519 Diffie-Hellman test vector).
    static let alicePrivate = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
    static let alicePublic = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
    static let bobPrivate = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
    static let bobPublic = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
    static let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"

    @Test func rfc7748PublicKeys() throws {
        let alice = SecureBytes(copying: try #require(bytes(hex: Self.alicePrivate)))
        let bob = SecureBytes(copying: try #require(bytes(hex: Self.bobPrivate)))
        #expect(hex(try X25519.publicKey(for: alice)) == Self.alicePublic)
        #expect(hex(try X25519.publicKey(for: bob)) == Self.bobPublic)
    }

    @Test func rfc7748SharedSecret() throws {
        let alice = SecureBytes(copying: try #require(bytes(hex: Self.alicePrivate)))
        let bob = SecureBytes(copying: try #require(bytes(hex: Self.bobPrivate)))
        let expected = SecureBytes(copying: try #require(bytes(hex: Self.shared)))
        let fromAlice = try X25519.sharedSecret(secret: alice, publicKey: try #require(bytes(hex: Self.bobPublic)))
        let fromBob = try X25519.sharedSecret(secret: bob, publicKey: try #require(bytes(hex: Self.alicePublic)))
        #expect(fromAlice == expected)
        #expect(fromBob == expected)
    }

    @Test func generatedKeysAgree() throws {
        let a = X25519.generateSecretKey(), b = X25519.generateSecretKey()
        #expect(a.count == X25519.keyLength)
        #expect(a != b)
        let ab = try X25519.sharedSecret(secret: a, publicKey: try X25519.publicKey(for: b))
        let ba = try X25519.sharedSecret(secret: b, publicKey: try X25519.publicKey(for: a))
        #expect(ab == ba)
    }

    @Test func lowOrderPublicKeyIsRejected() {
        let secret = X25519.generateSecretKey()
        // The all-zero point and the point of order 1 (u = 1) give an all-zero shared secret.
        let zero = [UInt8](repeating: 0, count: 32)
        var one = [UInt8](repeating: 0, count: 32); one[0] = 1
        #expect(throws: SodiumError.weakPublicKey) { try X25519.sharedSecret(secret: secret, publicKey: zero) }
        #expect(throws: SodiumError.weakPublicKey) { try X25519.sharedSecret(secret: secret, publicKey: one) }
    }

    @Test(arguments: [0, 31, 33, 64])
    func wrongLengthsThrow(length: Int) throws {
        let good = X25519.generateSecretKey()
        let publicKey = try X25519.publicKey(for: good)
        let badSecret = SecureBytes.random(count: length)
        #expect(throws: SodiumError.invalidKeyLength) { try X25519.publicKey(for: badSecret) }
        #expect(throws: SodiumError.invalidKeyLength) { try X25519.sharedSecret(secret: badSecret, publicKey: publicKey) }
        #expect(throws: SodiumError.invalidKeyLength) {
            try X25519.sharedSecret(secret: good, publicKey: [UInt8](repeating: 9, count: length))
        }
    }
}
