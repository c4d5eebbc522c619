import Sodium

/// The one-line text form of keys: a type prefix, then base64url of the 32 key bytes and a
/// 4-byte checksum, so a key cannot be mistaken for another tool's and a typo is caught.
///
///     blesend-pub1:<48 characters>     public key (safe to share)
///     blesend-sec1:<48 characters>     secret key (never share)
enum KeyText {
    static let publicPrefix = "blesend-pub1:"
    static let secretPrefix = "blesend-sec1:"
    static let keyLength = 32
    static let checksumLength = 4

    static func checksum(prefix: String, key: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = BLAKE2b(outputLength: 32)
        hasher.update(Array(prefix.utf8))
        hasher.update(key)
        return Array(hasher.finalize().prefix(checksumLength))
    }

    static func encode(prefix: String, key: SecureBytes) -> String {
        var text = encodedBytes(prefix: prefix, key: key)
        defer { secureZero(&text) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The text form as bytes, so that a secret's can be wiped after use. Every intermediate copy
    /// is wiped; the buffers are sized up front so that appending never leaves a reallocated copy.
    static func encodedBytes(prefix: String, key: SecureBytes) -> [UInt8] {
        key.withUnsafeBytes { raw in
            var payload: [UInt8] = []
            payload.reserveCapacity(raw.count + checksumLength)
            payload.append(contentsOf: raw)
            payload.append(contentsOf: checksum(prefix: prefix, key: raw))
            defer { secureZero(&payload) }
            var encoded = Base64URL.encodeToBytes(payload)
            defer { secureZero(&encoded) }
            var text: [UInt8] = []
            text.reserveCapacity(prefix.utf8.count + encoded.count)
            text.append(contentsOf: prefix.utf8)
            text.append(contentsOf: encoded)
            return text
        }
    }

    /// Decodes the text after `prefix`. The caller has already trimmed white space.
    static func decode(prefix: String, text: some Collection<UInt8>, what: String) throws(KeyError) -> SecureBytes {
        let prefixBytes = Array(prefix.utf8)
        guard text.starts(with: prefixBytes) else {
            let other = prefix == publicPrefix ? secretPrefix : publicPrefix
            if text.starts(with: Array(other.utf8)) {
                throw KeyError(.badEncoding, "this is a \(prefix == publicPrefix ? "secret" : "public") key where a \(what) was expected")
            }
            throw KeyError(.badEncoding, "not a blesend \(what) (it should start with \(prefix))")
        }
        guard let payload = Base64URL.decodeSecret(text.dropFirst(prefixBytes.count), count: keyLength + checksumLength) else {
            throw KeyError(.badEncoding, "the \(what) is damaged: wrong length or characters", hint: "copy the whole line again")
        }
        let key = SecureBytes(count: keyLength)
        let valid = payload.withUnsafeBytes { raw -> Bool in
            let keyPart = UnsafeRawBufferPointer(rebasing: raw[0..<keyLength])
            key.withUnsafeMutableBytes { $0.copyMemory(from: keyPart) }
            return checksum(prefix: prefix, key: keyPart) == Array(raw[keyLength...])
        }
        guard valid else {
            throw KeyError(.badChecksum, "the \(what) has a typo: its checksum does not match", hint: "copy the whole line again")
        }
        return key
    }
}
