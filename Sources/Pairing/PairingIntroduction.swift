import Keys
import Sodium

/// The plaintext of P2 and P3: a side's X25519 static public key (32 bytes) then the name it
/// suggests for itself (`PairingName`, 1...32 bytes, no length byte: the rest of the plaintext).
enum PairingIntroduction {
    /// `publicKey ‖ name`; the name must already have passed `PairingName`.
    static func encode(publicKey: PublicKey, name: String) -> [UInt8] {
        publicKey.bytes + Array(name.utf8)
    }

    /// The peer an opened introduction names. `.malformed` for a length out of range, a name that
    /// breaks `PairingName`, and a static key that is all zero or of low order: one whose X25519
    /// with our own secret key is all zero (the handshake's test, protocol.md §3; our secret is
    /// clamped, so every low-order point fails it).
    static func decode(_ plaintext: [UInt8], checkedWith identity: Identity) throws(PairingError) -> PairingPeer {
        guard (PairingLayout.minIntroductionLength...PairingLayout.maxIntroductionLength).contains(plaintext.count) else {
            throw .malformed
        }
        let keyBytes = Array(plaintext[..<PairingLayout.staticKeyLength])
        let nameBytes = plaintext[PairingLayout.staticKeyLength...]
        guard PairingName.isValid(bytes: nameBytes),
              keyBytes.contains(where: { $0 != 0 }),
              let publicKey = PublicKey(bytes: keyBytes),
              (try? X25519.sharedSecret(secret: identity.secretKey, publicKey: keyBytes)) != nil else {
            throw .malformed
        }
        return PairingPeer(publicKey: publicKey, name: String(decoding: nameBytes, as: UTF8.self))
    }
}
