import Sodium

/// CPace's length-value encoding (draft-irtf-cfrg-cpace-21, appendix A.1): `prepend_len(s)` is
/// the length of `s` in LEB128 (7 bits a byte, least significant first, the top bit set on every
/// byte but the last) followed by `s`; `lv_cat(a, b, …)` is `prepend_len(a) ‖ prepend_len(b) ‖ …`.
/// Every field in pairing is shorter than 128 bytes, so each length is one byte.
enum LengthValue {
    /// The LEB128 encoding of `length`.
    static func leb128(_ length: Int) -> [UInt8] {
        var rest = UInt(max(length, 0))
        var encoded: [UInt8] = []
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            encoded.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
        return encoded
    }

    /// `prepend_len(bytes)`.
    static func prependLength(_ bytes: some Collection<UInt8>) -> [UInt8] {
        leb128(bytes.count) + bytes
    }

    /// `lv_cat(parts…)`.
    static func concatenate(_ parts: [[UInt8]]) -> [UInt8] {
        parts.flatMap { prependLength($0) }
    }
}

extension SHA512 {
    /// Hashes `prepend_len(bytes)`.
    mutating func updatePrependingLength(_ bytes: some Collection<UInt8>) {
        update(LengthValue.leb128(bytes.count))
        update(bytes)
    }

    /// Hashes `prepend_len(secret)` without copying the secret.
    mutating func updatePrependingLength(_ secret: SecureBytes) {
        update(LengthValue.leb128(secret.count))
        update(secret)
    }
}
