import Sodium

/// A peer's X25519 public key: what users pin, paste and compare.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == KeyText.keyLength else { return nil }
        self.bytes = bytes
    }

    /// Parses the one-line text form (`blesend-pub1:…`), ignoring surrounding white space.
    public init(text: String) throws(KeyError) {
        let trimmed = Array(text.utf8).trimmedASCIIWhitespace()
        let secret = try KeyText.decode(prefix: KeyText.publicPrefix, text: trimmed, what: "public key")
        bytes = secret.withUnsafeBytes { Array($0) }
    }

    /// The one-line text form.
    public var text: String { KeyText.encode(prefix: KeyText.publicPrefix, key: SecureBytes(copying: bytes)) }

    /// Bytes of the digest a fingerprint shows: 128 bits, so that finding another key with the same
    /// fingerprint costs about 2^128 key generations (a 64-bit one could be matched by a patient
    /// attacker with about 2^64).
    public static let fingerprintBytes = 16

    /// The form to compare by reading aloud: the first `fingerprintBytes` of
    /// BLAKE2b-256("blesend fingerprint" ‖ key) as 32 lowercase hex digits in eight groups of four
    /// (`0c5f 40b9 d0c9 1cf3 35cb 14c2 5c9f cc81`). Only for people: code compares whole keys.
    public var fingerprint: String {
        let digest = BLAKE2b.hash(Array("blesend fingerprint".utf8) + bytes, outputLength: 32)
        let digits = Array("0123456789abcdef")
        var groups: [String] = []
        for pair in stride(from: 0, to: Self.fingerprintBytes, by: 2) {
            let group = digest[pair..<pair + 2].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }
            groups.append(String(group))
        }
        return groups.joined(separator: " ")
    }

    public var description: String { text }
}

extension Collection<UInt8> {
    /// The bytes between leading and trailing ASCII white space, as a slice of `self` (no copy,
    /// which matters for secret text).
    func trimmedASCIIWhitespace() -> SubSequence {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
        var end = first
        var index = first
        while index != endIndex {
            if !isSpace(self[index]) { end = self.index(after: index) }
            index = self.index(after: index)
        }
        return self[first..<end]
    }
}
