import Sodium
import TestSupport
import Testing

@Suite struct SHA512Tests {
    // FIPS 180-4 examples (NIST CSRC "SHA512.pdf"): "abc", the empty string, the two-block message.
    static let abc = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
    static let empty = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
    static let twoBlockMessage = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
    static let twoBlock = "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"

    @Test func fipsExamples() {
        #expect(hex(SHA512.hash(Array("abc".utf8))) == Self.abc)
        #expect(hex(SHA512.hash([UInt8]())) == Self.empty)
        #expect(hex(SHA512.hash(Array(Self.twoBlockMessage.utf8))) == Self.twoBlock)
    }

    @Test func streamingMatchesOneShotAndFinalizeKeepsTheState() {
        var hasher = SHA512()
        hasher.update(Array("ab".utf8))
        let copy = hasher
        hasher.update(Array("c".utf8))
        #expect(hex(hasher.finalize()) == Self.abc)
        #expect(hex(hasher.finalize()) == Self.abc)
        var other = copy
        other.update(Array("c".utf8))
        #expect(hex(other.finalize()) == Self.abc)          // the copy was not changed by `hasher`
        other.update(SecureBytes(copying: Array("d".utf8)))
        #expect(other.finalizeSecret() == SecureBytes(copying: SHA512.hash(Array("abcd".utf8))))
        #expect(SHA512.secretHash(Array("abc".utf8)).count == SHA512.outputLength)
    }
}
