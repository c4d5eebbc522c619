import CSodium
import Keys
import Sodium
import Testing
@testable import Discovery

@Suite struct DiscoveryKeyTests {
    @Test func bothSidesDeriveTheSamePairKey() throws {
        let receiver = Identity.generate(), sender = Identity.generate(), other = Identity.generate()
        let receiverSide = try DiscoveryKey.forReceiver(identity: receiver, sender: sender.publicKey)
        let senderSide = try DiscoveryKey.forSender(identity: sender, receiver: receiver.publicKey)
        #expect(receiverSide == senderSide)
        #expect(receiverSide.secret.count == 32)
        #expect(try DiscoveryKey.forReceiver(identity: receiver, sender: other.publicKey) != receiverSide)
        #expect(try DiscoveryKey.forSender(identity: other, receiver: receiver.publicKey) != senderSide)
    }

    /// Low-order public keys give the all-zero X25519 result; refused as in the handshake.
    @Test(arguments: [
        [UInt8](repeating: 0, count: 32),
        [1] + [UInt8](repeating: 0, count: 31),
        // A point of order 8 (one of the low-order points listed at cr.yp.to/ecdh.html).
        bytes(hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
    ])
    func lowOrderPublicKeysAreRefused(_ point: [UInt8]) throws {
        let key = try #require(PublicKey(bytes: point))
        let identity = Identity.generate()
        #expect(throws: DiscoveryError.weakPublicKey) { try DiscoveryKey.forSender(identity: identity, receiver: key) }
        #expect(throws: DiscoveryError.weakPublicKey) { try DiscoveryKey.forReceiver(identity: identity, sender: key) }
    }

    /// Someone with both public keys but neither secret key: whatever secret it tries (a random one,
    /// or a public key used as if it were one), its key and digest differ from the pair's.
    @Test func anObserverWithThePublicKeysCannotComputeTheKey() throws {
        let receiver = Identity.generate(), sender = Identity.generate()
        let real = try DiscoveryKey.forReceiver(identity: receiver, sender: sender.publicKey)
        let salt = DiscoverySalt.random()
        let realDigest = real.digest(form: .slots, salt: salt)
        let publicKeyAsSecret = try Identity(secretKey: SecureBytes(copying: sender.publicKey.bytes))
        var guesses = [try DiscoveryKey.forSender(identity: publicKeyAsSecret, receiver: receiver.publicKey)]
        for _ in 0..<100 {
            guesses.append(try DiscoveryKey.forSender(identity: Identity.generate(), receiver: receiver.publicKey))
            guesses.append(try DiscoveryKey.forReceiver(identity: Identity.generate(), sender: sender.publicKey))
        }
        for guess in guesses {
            #expect(guess != real)
            #expect(guess.digest(form: .slots, salt: salt) != realDigest)
        }
    }

    /// The same pair under different salts: different digests, and none of the relations an observer
    /// could use to link them (a fixed XOR difference between two salts that all pairs share, tags
    /// that repeat, or salts one bit apart giving digests a few bits apart).
    @Test func tagsUnderDifferentSaltsAreUnrelated() throws {
        let first = try randomPairKey(), second = try randomPairKey()
        let saltA = try salt([0x00, 0x00, 0x00]), saltB = try salt([0x00, 0x00, 0x01])
        let firstA = first.digest(form: .slots, salt: saltA), firstB = first.digest(form: .slots, salt: saltB)
        let secondA = second.digest(form: .slots, salt: saltA), secondB = second.digest(form: .slots, salt: saltB)
        #expect(firstA != firstB)
        #expect(zip(firstA, firstB).map { $0 ^ $1 } != zip(secondA, secondB).map { $0 ^ $1 })
        // Salts one bit apart: about half of the 128 digest bits differ (mean 64, standard deviation 5.7).
        let flipped = zip(firstA, firstB).reduce(0) { $0 + ($1.0 ^ $1.1).nonzeroBitCount }
        #expect((32...96).contains(flipped))
        // 300 salts: 300 tags of 16 bits collide in about 0.7 pairs; 10 repeats would mean structure.
        let tags = (0..<300).map { index in
            (try? salt([0x5a, UInt8(index >> 8), UInt8(index & 0xff)])).map { first.slotTag(salt: $0) } ?? []
        }
        #expect(Set(tags).count >= 290)
    }

    /// Fixed keys and salt, and the values written out, recomputed here with libsodium's C calls
    /// one by one (not through the module): X25519 both ways, BLAKE2b-256 keyed with the DH result,
    /// BLAKE2b-128 keyed with K over header ‖ salt.
    @Test func fixedVector() throws {
        let receiver = try fixedIdentity("receiver"), sender = try fixedIdentity("sender")
        let vectorSalt = try salt([0x01, 0x02, 0x03])
        let key = try DiscoveryKey.forReceiver(identity: receiver, sender: sender.publicKey)

        let expectedK = "bbb2c1afc751ad12a38e3ee50efc53b682bb58886ee22f123e713a4a11a9b803"
        let expectedSlotsDigest = "7dfea43e5c37f0609cdc63a0eb3cb1ec"
        let expectedBloomDigest = "b6e0bc0a1b6fa67656fca0aadbab8684"
        #expect(hex(key.secret.withUnsafeBytes { Array($0) }) == expectedK)
        #expect(hex(key.digest(form: .slots, salt: vectorSalt)) == expectedSlotsDigest)
        #expect(hex(key.slotTag(salt: vectorSalt)) == String(expectedSlotsDigest.prefix(4)))
        #expect(hex(key.digest(form: .bloomFilter, salt: vectorSalt)) == expectedBloomDigest)
        #expect(key.bloomPositions(salt: vectorSalt) == [16, 42, 15, 38])

        // Step by step with libsodium.
        #expect(sodium_init() >= 0)
        var receiverDH = [UInt8](repeating: 0, count: 32), senderDH = [UInt8](repeating: 0, count: 32)
        let receiverSecret = fixedSecret("receiver"), senderSecret = fixedSecret("sender")
        #expect(crypto_scalarmult(&receiverDH, receiverSecret, sender.publicKey.bytes) == 0)
        #expect(crypto_scalarmult(&senderDH, senderSecret, receiver.publicKey.bytes) == 0)
        #expect(receiverDH == senderDH)
        let label = Array("blesend/1 discovery".utf8)
        var k = [UInt8](repeating: 0, count: 32)
        #expect(crypto_generichash(&k, 32, label, UInt64(label.count), receiverDH, 32) == 0)
        #expect(hex(k) == expectedK)
        var slotsDigest = [UInt8](repeating: 0, count: 16), bloomDigest = [UInt8](repeating: 0, count: 16)
        #expect(crypto_generichash(&slotsDigest, 16, [0x01, 0x01, 0x02, 0x03], 4, k, 32) == 0)
        #expect(crypto_generichash(&bloomDigest, 16, [0x02, 0x01, 0x02, 0x03], 4, k, 32) == 0)
        #expect(hex(slotsDigest) == expectedSlotsDigest)
        #expect(hex(bloomDigest) == expectedBloomDigest)
        let positions = (0..<4).map { (Int(bloomDigest[2 * $0]) << 8 | Int(bloomDigest[2 * $0 + 1])) % 48 }
        #expect(positions == key.bloomPositions(salt: vectorSalt))
    }
}
