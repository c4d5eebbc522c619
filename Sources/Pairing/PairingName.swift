/// The rule for the name each side suggests for itself in P2 and P3 (docs/protocol.md §9):
/// 1...32 bytes, each an ASCII letter, digit, '.', '_' or '-', the first not a '.'.
///
/// The name becomes a file name on the other side (`NAME.pub` in a trust directory or the
/// sender's address book), so it is stricter than Keys' `TrustStore` rule for names (which also
/// allows non-ASCII letters and up to 64 bytes): every name this accepts, `TrustStore.add`
/// accepts too. It is only a suggestion; each user may change it.
public enum PairingName {
    /// Whether `name` follows the rule.
    public static func isValid(_ name: String) -> Bool {
        isValid(bytes: Array(name.utf8))
    }

    /// Whether `bytes` (a name as sent) follows the rule.
    public static func isValid(bytes: some Collection<UInt8>) -> Bool {
        guard (PairingLayout.minNameLength...PairingLayout.maxNameLength).contains(bytes.count),
              bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy(isNameByte)
    }

    /// Whether `byte` may stand in a name: an ASCII letter, digit, '.', '_' or '-'.
    public static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
