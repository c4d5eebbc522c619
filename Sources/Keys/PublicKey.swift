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

    /// A short form to compare by reading aloud: 16 hex digits in groups of four.
    public var fingerprint: String {
        let digest = BLAKE2b.hash(Array("blesend fingerprint".utf8) + bytes, outputLength: 32)
        let hex = digest.prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
        return stride(from: 0, to: 16, by: 4).map { start in
            String(hex[hex.index(hex.startIndex, offsetBy: start)..<hex.index(hex.startIndex, offsetBy: start + 4)])
        }.joined(separator: " ")
    }

    public var description: String { text }
}

extension Array where Element == UInt8 {
    func trimmedASCIIWhitespace() -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return [] }
        return self[first...last]
    }
}
