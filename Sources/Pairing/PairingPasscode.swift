import Sodium

/// The code the receiver's user reads out and the sender's user types (docs/protocol.md §9):
/// 8 random decimal digits, shown as "1234 5678". One code is good for one attempt; a man in the
/// middle guesses it with probability 10^-8 per attempt.
///
/// Not to be confused with Handshake's `PairingCode`, the six digits both sides show on first
/// contact (derived from a handshake, not typed).
public struct PairingPasscode: Hashable, Sendable, CustomStringConvertible {
    /// Digits in a code.
    public static let digitCount = 8
    /// Codes are `0..<upperBound`.
    public static let upperBound: UInt32 = 100_000_000

    /// The code as a number, `0..<upperBound`.
    public let value: UInt32

    /// The code `value`; nil unless it is below `upperBound`.
    public init?(value: UInt32) {
        guard value < Self.upperBound else { return nil }
        self.value = value
    }

    /// A fresh code from libsodium's generator (`randombytes_uniform(10^8)`, no modulo bias).
    public static func random() -> PairingPasscode {
        PairingPasscode(uncheckedValue: Random.uniform(upperBound))
    }

    private init(uncheckedValue: UInt32) { value = uncheckedValue % Self.upperBound }

    /// What the user typed: exactly 8 ASCII digits, with any spaces and dashes between, before or
    /// after them ignored ("1234 5678", "12345678", "1234-5678"); nil for anything else.
    public init?(typed: String) {
        var number: UInt32 = 0
        var digits = 0
        for byte in typed.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                guard digits <= Self.digitCount else { return nil }
                number = number * 10 + UInt32(byte - UInt8(ascii: "0"))
            default:
                return nil
            }
        }
        guard digits == Self.digitCount else { return nil }
        self.init(uncheckedValue: number)
    }

    /// The 8 ASCII digits, leading zeros kept: CPace's password-related string (PRS).
    public var prs: [UInt8] {
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: Self.digitCount)
        var rest = value
        for index in stride(from: Self.digitCount - 1, through: 0, by: -1) {
            digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return digits
    }

    /// The code as shown: two groups of four digits ("0123 4567").
    public var display: String {
        let digits = prs
        return String(decoding: digits[0..<4], as: UTF8.self) + " " + String(decoding: digits[4...], as: UTF8.self)
    }

    /// Hides the digits, so that a code in a log line or an error message does not give itself away.
    public var description: String { "PairingPasscode(\(Self.digitCount) digits)" }
}
