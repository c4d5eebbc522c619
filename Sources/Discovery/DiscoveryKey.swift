import Keys
import Sodium

/// The key a receiver shares with one sender it trusts, for recognising the receiver's
/// advertisements (docs/drafts/discovery.md):
///
///     K = BLAKE2b-256(key: X25519(r, S) = X25519(s, R), message: "blesend/1 discovery")
///
/// Both sides compute the same `K`; nobody without one of the two secret keys can. The salted
/// digest that advertisements carry is `BLAKE2b-128(key: K, message: header ‖ salt)`.
public struct DiscoveryKey: Sendable, Equatable {
    /// `K`, `DiscoveryLayout.pairKeyLength` bytes.
    let secret: SecureBytes

    /// The receiver's side: its identity and a sender it trusts.
    public static func forReceiver(identity: Identity, sender: PublicKey) throws(DiscoveryError) -> DiscoveryKey {
        try derive(secretKey: identity.secretKey, peer: sender)
    }

    /// The sender's side: its identity and the receiver it pins.
    public static func forSender(identity: Identity, receiver: PublicKey) throws(DiscoveryError) -> DiscoveryKey {
        try derive(secretKey: identity.secretKey, peer: receiver)
    }

    /// Refuses a peer key whose X25519 result is all zero, as the handshake does (protocol.md §3).
    static func derive(secretKey: SecureBytes, peer: PublicKey) throws(DiscoveryError) -> DiscoveryKey {
        let shared: SecureBytes
        do {
            shared = try X25519.sharedSecret(secret: secretKey, publicKey: peer.bytes)
        } catch SodiumError.weakPublicKey {
            throw .weakPublicKey
        } catch {
            throw .invalidSecretKey
        }
        let key = BLAKE2b.secretHash(DiscoveryLayout.pairKeyLabel, outputLength: DiscoveryLayout.pairKeyLength, key: shared)
        return DiscoveryKey(secret: key)
    }

    /// `BLAKE2b-128(key: K, message: form ‖ salt)`. The form byte keeps the two forms' values apart
    /// should a receiver ever use one salt for both.
    func digest(form: DiscoveryForm, salt: DiscoverySalt) -> [UInt8] {
        BLAKE2b.hash([form.rawValue] + salt.bytes, outputLength: DiscoveryLayout.digestLength, key: secret)
    }

    /// This pair's tag under `salt` in the slots form: the digest's first `tagLength` bytes.
    public func slotTag(salt: DiscoverySalt) -> [UInt8] {
        Array(digest(form: .slots, salt: salt).prefix(DiscoveryLayout.tagLength))
    }

    /// This pair's bits under `salt` in the Bloom filter form: bytes 2i and 2i+1 of the digest, as
    /// a big-endian `u16`, modulo `bloomBits`, for i in 0..<`bloomHashCount` (65536 = 16 mod 48, so
    /// bits 0...15 are 1/4096 likelier than the others: that only nudges the false-match rate).
    public func bloomPositions(salt: DiscoverySalt) -> [Int] {
        DiscoveryBloomFilter.positions(fromDigest: digest(form: .bloomFilter, salt: salt))
    }
}
