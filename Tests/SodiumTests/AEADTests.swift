import Sodium
import TestSupport
import Testing

/// The plaintext shared by RFC 8439 §2.8.2 and draft-irtf-cfrg-xchacha-03 §A.3.1.
let sunscreen = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
let vectorKey = SecureBytes(copying: (0x80...0x9f).map { UInt8($0) })
let vectorAssociatedData: [UInt8] = [0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7]

@Suite struct ChaCha20Poly1305IETFTests {
    static let aead = AEAD.chaCha20Poly1305IETF

    // RFC 8439, section 2.8.2 (AEAD_CHACHA20_POLY1305 test vector).
    static let nonce = "070000004041424344454647"
    static let ciphertext = """
        d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b
        1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
        3ff4def08e4b7a9de576d26586cec64b6116
        """
    static let tag = "1ae10b594f09e26a7e902ecbd0600691"

    @Test func rfc8439Seal() throws {
        let sealed = try Self.aead.seal(key: vectorKey, nonce: try #require(bytes(hex: Self.nonce)),
                                   plaintext: sunscreen, associatedData: vectorAssociatedData)
        #expect(hex(sealed) == (Self.ciphertext + Self.tag).filter { !$0.isWhitespace })
    }

    @Test func rfc8439Open() throws {
        let sealed = try #require(bytes(hex: Self.ciphertext + Self.tag))
        let opened = try Self.aead.open(key: vectorKey, nonce: try #require(bytes(hex: Self.nonce)),
                                   ciphertext: sealed, associatedData: vectorAssociatedData)
        #expect(opened == sunscreen)
    }

    @Test func constants() {
        #expect(Self.aead.keyLength == 32 && Self.aead.nonceLength == 12 && Self.aead.tagLength == 16)
    }
}

@Suite struct XChaCha20Poly1305IETFTests {
    static let aead = AEAD.xChaCha20Poly1305IETF

    // draft-irtf-cfrg-xchacha-03, appendix A.3.1 (AEAD_XChaCha20_Poly1305 test vector),
    // also used by libsodium's test/default/aead_xchacha20poly1305.c.
    static let nonce = "404142434445464748494a4b4c4d4e4f5051525354555657"
    static let ciphertext = """
        bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39
        ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
        21f9664c97637da9768812f615c68b13b52e
        """
    static let tag = "c0875924c1c7987947deafd8780acf49"

    @Test func draftXChaChaSeal() throws {
        let sealed = try Self.aead.seal(key: vectorKey, nonce: try #require(bytes(hex: Self.nonce)),
                                   plaintext: sunscreen, associatedData: vectorAssociatedData)
        #expect(hex(sealed) == (Self.ciphertext + Self.tag).filter { !$0.isWhitespace })
    }

    @Test func draftXChaChaOpen() throws {
        let sealed = try #require(bytes(hex: Self.ciphertext + Self.tag))
        let opened = try Self.aead.open(key: vectorKey, nonce: try #require(bytes(hex: Self.nonce)),
                                   ciphertext: sealed, associatedData: vectorAssociatedData)
        #expect(opened == sunscreen)
    }

    @Test func constants() {
        #expect(Self.aead.keyLength == 32 && Self.aead.nonceLength == 24 && Self.aead.tagLength == 16)
    }

    @Test func pointerPathMatchesArrayPath() throws {
        let key = SecureBytes.random(count: 32)
        let nonce = Random.bytes(24)
        let ad: [UInt8] = [1]
        for length in [0, 1, 15, 16, 17, 4096] {
            let plaintext = Random.bytes(length)
            let viaArrays = try Self.aead.seal(key: key, nonce: nonce, plaintext: plaintext, associatedData: ad)
            var output = [UInt8](repeating: 0xee, count: length + 16 + 5)
            let written = try nonce.withUnsafeBytes { n in
                try plaintext.withUnsafeBytes { p in
                    try ad.withUnsafeBytes { a in
                        try output.withUnsafeMutableBytes { o in
                            try Self.aead.seal(key: key, nonce: n, plaintext: p, associatedData: a, into: o)
                        }
                    }
                }
            }
            #expect(written == length + 16)
            #expect(Array(output[..<written]) == viaArrays)
            #expect(output[written...].allSatisfy { $0 == 0xee }, "wrote past the result")

            var opened = [UInt8](repeating: 0, count: length)
            let openedCount = try nonce.withUnsafeBytes { n in
                try viaArrays.withUnsafeBytes { c in
                    try ad.withUnsafeBytes { a in
                        try opened.withUnsafeMutableBytes { o in
                            try Self.aead.open(key: key, nonce: n, ciphertext: c, associatedData: a, into: o)
                        }
                    }
                }
            }
            #expect(openedCount == length)
            #expect(opened == plaintext)
        }
    }

    @Test func pointerPathRejectsSmallOutput() throws {
        let key = SecureBytes.random(count: 32)
        let nonce = [UInt8](repeating: 0, count: 24)
        var output = [UInt8](repeating: 0, count: 16 + 9)
        #expect(throws: SodiumError.outputBufferTooSmall) {
            try nonce.withUnsafeBytes { n in
                try [UInt8](repeating: 1, count: 10).withUnsafeBytes { p in
                    try output.withUnsafeMutableBytes { o in
                        try Self.aead.seal(key: key, nonce: n, plaintext: p, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), into: o)
                    }
                }
            }
        }
    }
}

/// Behaviour both AEADs share, run against each.
@Suite struct AEADBehaviourTests {
    struct Variant: Sendable, CustomTestStringConvertible {
        let name: String
        let nonceLength: Int
        let seal: @Sendable (SecureBytes, [UInt8], [UInt8], [UInt8]) throws -> [UInt8]
        let open: @Sendable (SecureBytes, [UInt8], [UInt8], [UInt8]) throws -> [UInt8]
        var testDescription: String { name }
    }

    static let variants = [
        Variant(name: "ChaCha20Poly1305IETF", nonceLength: 12,
                seal: { try AEAD.chaCha20Poly1305IETF.seal(key: $0, nonce: $1, plaintext: $2, associatedData: $3) },
                open: { try AEAD.chaCha20Poly1305IETF.open(key: $0, nonce: $1, ciphertext: $2, associatedData: $3) }),
        Variant(name: "XChaCha20Poly1305IETF", nonceLength: 24,
                seal: { try AEAD.xChaCha20Poly1305IETF.seal(key: $0, nonce: $1, plaintext: $2, associatedData: $3) },
                open: { try AEAD.xChaCha20Poly1305IETF.open(key: $0, nonce: $1, ciphertext: $2, associatedData: $3) }),
    ]

    @Test(arguments: variants)
    func roundTrips(_ aead: Variant) throws {
        let key = SecureBytes.random(count: 32)
        let nonce = Random.bytes(aead.nonceLength)
        for length in [0, 1, 63, 64, 65, 1000] {
            let plaintext = Random.bytes(length)
            let sealed = try aead.seal(key, nonce, plaintext, [9, 9])
            #expect(sealed.count == length + 16)
            #expect(try aead.open(key, nonce, sealed, [9, 9]) == plaintext)
        }
    }

    @Test(arguments: variants)
    func everyTamperedByteIsDetected(_ aead: Variant) throws {
        let key = SecureBytes.random(count: 32)
        let nonce = Random.bytes(aead.nonceLength)
        let sealed = try aead.seal(key, nonce, Array("attack at dawn".utf8), [1, 2, 3])
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: SodiumError.authenticationFailed, "byte \(index)") { try aead.open(key, nonce, tampered, [1, 2, 3]) }
        }
        #expect(throws: SodiumError.authenticationFailed) { try aead.open(key, nonce, sealed, [1, 2]) }
        var otherNonce = nonce; otherNonce[0] ^= 1
        #expect(throws: SodiumError.authenticationFailed) { try aead.open(key, otherNonce, sealed, [1, 2, 3]) }
        #expect(throws: SodiumError.authenticationFailed) { try aead.open(SecureBytes.random(count: 32), nonce, sealed, [1, 2, 3]) }
        for length in 0..<16 {
            #expect(throws: SodiumError.authenticationFailed) { try aead.open(key, nonce, Array(sealed.prefix(length)), [1, 2, 3]) }
        }
    }

    @Test(arguments: variants)
    func wrongLengthsThrow(_ aead: Variant) throws {
        let goodKey = SecureBytes.random(count: 32)
        let goodNonce = Random.bytes(aead.nonceLength)
        for keyLength in [0, 16, 31, 33] {
            #expect(throws: SodiumError.invalidKeyLength) { try aead.seal(SecureBytes.random(count: keyLength), goodNonce, [1], []) }
            #expect(throws: SodiumError.invalidKeyLength) { try aead.open(SecureBytes.random(count: keyLength), goodNonce, [UInt8](repeating: 0, count: 17), []) }
        }
        for nonceLength in [0, aead.nonceLength - 1, aead.nonceLength + 1] {
            #expect(throws: SodiumError.invalidNonceLength) { try aead.seal(goodKey, Random.bytes(nonceLength), [1], []) }
            #expect(throws: SodiumError.invalidNonceLength) { try aead.open(goodKey, Random.bytes(nonceLength), [UInt8](repeating: 0, count: 17), []) }
        }
    }
}
