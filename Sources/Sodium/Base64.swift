import CSodium

/// URL-safe base64 without padding (libsodium's constant-time codec), for key text.
public enum Base64URL {
    /// The text form of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var text = encodeToBytes(bytes)
        defer { secureZero(&text) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The text form of `bytes` as ASCII bytes, for secrets: the caller wipes the result.
    public static func encodeToBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
        LibSodium.requireInitialized()
        let variant = Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        let length = sodium_base64_encoded_len(bytes.count, variant)
        var out = [UInt8](repeating: 0, count: length)
        out.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return }
                withContiguousBytes(bytes) { source in
                    _ = sodium_bin2base64(base, length, source.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                          source.count, variant)
                }
            }
        }
        let used = out.firstIndex(of: 0) ?? out.count
        let text = Array(out[..<used])
        secureZero(&out)
        return text
    }

    /// Decodes `text` into a secret buffer of exactly `count` bytes; nil if it is not valid
    /// base64url of that length. The intermediate buffer is wiped.
    public static func decodeSecret(_ text: some Collection<UInt8>, count: Int) -> SecureBytes? {
        LibSodium.requireInitialized()
        var bin = [UInt8](repeating: 0, count: count + 3)
        defer { secureZero(&bin) }
        var written = 0
        let status = withContiguousBytes(text) { source -> Int32 in
            source.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(&bin, bin.count, chars.baseAddress, chars.count, nil, &written, nil,
                                  Int32(sodium_base64_VARIANT_URLSAFE_NO_PADDING))
            }
        }
        guard status == 0, written == count else { return nil }
        return SecureBytes(copying: bin.prefix(count))
    }

    /// Decodes public (non-secret) text into exactly `count` bytes.
    public static func decode(_ text: some Collection<UInt8>, count: Int) -> [UInt8]? {
        decodeSecret(text, count: count)?.withUnsafeBytes { Array($0) }
    }
}
