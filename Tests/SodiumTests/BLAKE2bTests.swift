import Sodium
import TestSupport
import Testing

@Suite struct BLAKE2bTests {
    // RFC 7693, Appendix A: BLAKE2b-512("abc").
    static let abc512 = "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
        + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"

    @Test func rfc7693Abc() {
        #expect(hex(BLAKE2b.hash(Array("abc".utf8), outputLength: 64)) == Self.abc512)
    }

    // BLAKE2b-256 of the empty string, as published in the BLAKE2 reference test vectors
    // (and by Python's hashlib.blake2b(digest_size=32)).
    @Test func empty256() {
        #expect(hex(BLAKE2b.hash([UInt8]())) == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
    }

    // Keyed vector from the BLAKE2 reference "blake2b-kat.txt": key = 00..3f, input = empty, 64-byte digest.
    @Test func keyedKAT() throws {
        let key = SecureBytes(copying: (0..<64).map { UInt8($0) })
        let expected = "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
            + "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"
        #expect(hex(BLAKE2b.hash([UInt8](), outputLength: 64, key: key)) == expected)
    }

    @Test func streamingMatchesOneShot() {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        for split in [0, 1, 127, 128, 129, 500, 1000] {
            var hasher = BLAKE2b(outputLength: 64)
            hasher.update(message[..<split])
            message[split...].withUnsafeBytes { hasher.update($0) }
            #expect(hasher.finalize() == BLAKE2b.hash(message, outputLength: 64), "split at \(split)")
        }
    }

    @Test func nonContiguousCollectionsHashTheSame() {
        let message = Array("hello, blesend".utf8)
        var hasher = BLAKE2b()
        hasher.update(message.reversed().reversed() as ReversedCollection<ReversedCollection<[UInt8]>>)
        #expect(hasher.finalize() == BLAKE2b.hash(message))
    }

    @Test func copiesHashIndependently() {
        var a = BLAKE2b()
        a.update(Array("common".utf8))
        var b = a
        a.update(Array("-a".utf8))
        b.update(Array("-b".utf8))
        #expect(a.finalize() == BLAKE2b.hash(Array("common-a".utf8)))
        #expect(b.finalize() == BLAKE2b.hash(Array("common-b".utf8)))
    }

    @Test func finalizeLeavesHasherUsable() {
        var hasher = BLAKE2b()
        hasher.update(Array("ab".utf8))
        let first = hasher.finalize()
        #expect(hasher.finalize() == first)
        hasher.update(Array("c".utf8))
        #expect(hasher.finalize() == BLAKE2b.hash(Array("abc".utf8)))
    }

    @Test func keyChangesDigestAndSecretHashMatches() {
        let key = SecureBytes(copying: [UInt8](repeating: 1, count: 32))
        let message = Array("blesend/1 rekey".utf8)
        let keyed = BLAKE2b.hash(message, key: key)
        #expect(keyed != BLAKE2b.hash(message))
        #expect(BLAKE2b.secretHash(message, key: key) == SecureBytes(copying: keyed))
    }
}
