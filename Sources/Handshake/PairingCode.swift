import Sodium

/// The six digits both sides show on first contact (`blerecv --ask`, docs/drafts/discovery.md):
/// the receiver next to the unknown sender's fingerprint, the sender while it waits for the
/// receiver's user. Equal codes mean both sides took part in the same handshake.
///
///     digest = BLAKE2b-256("blesend/1 pairing code" ‖ h)
///     code   = (digest[0..<8] as a big-endian u64) mod 10^6, shown as "ddd ddd"
///
/// `h` MUST be the handshake hash after message 2 (`HandshakeResult.handshakeHash`), not after
/// message 1: `h` is a hash of what went over the air, and after message 1 alone it contains
/// nothing the receiver chose, so a man in the middle who saw the sender's message 1 could try
/// ephemeral keys of its own (about 10^6 X25519 operations) until its handshake with the receiver
/// shows the sender's code. After message 2 it also holds the receiver's fresh ephemeral key,
/// chosen after the initiator committed to message 1: every attempt gives a new random code.
///
/// The modulo leaves a bias: 2^64 mod 10^6 = 551616, so codes below 551616 are likelier by a
/// factor of 1 + 5.4e-14. That is far below anything a user comparing codes could exploit; no
/// rejection sampling is needed.
public enum PairingCode {
    /// The BLAKE2b prefix that keeps this use of `h` apart from every other.
    public static let label: [UInt8] = Array("blesend/1 pairing code".utf8)
    public static let modulus: UInt64 = 1_000_000

    /// The code as shown: six decimal digits, a space after the third ("012 345").
    public static func from(handshakeHash: [UInt8]) -> String {
        format(value(handshakeHash: handshakeHash))
    }

    /// The code as a number, 0...999999.
    public static func value(handshakeHash: [UInt8]) -> UInt32 {
        let digest = BLAKE2b.hash(label + handshakeHash, outputLength: 32)
        let number = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return UInt32(number % modulus)
    }

    /// `value` (taken modulo 10^6) as six digits with a space after the third.
    public static func format(_ value: UInt32) -> String {
        let digits = String(UInt64(value) % modulus)
        let padded = String(repeating: "0", count: 6 - digits.count) + digits
        return String(padded.prefix(3)) + " " + String(padded.suffix(3))
    }
}
