/// Sizes, bytes and labels of the pairing messages (docs/protocol.md §9), in one place.
///
///     P1  S -> R  modeByte ‖ sid (16) ‖ Ya (32)                                   49 bytes
///     P2  R -> S  Yb (32) ‖ AEAD(k_R, 0, receiver key (32) ‖ name)            81...112 bytes
///     P3  S -> R  AEAD(k_S, 0, sender key (32) ‖ name)                         49...80 bytes
///     P4  R -> S  AEAD(k_R, 1, pinnedConfirmation)                                17 bytes
///
/// or, in place of P2, one byte: `refusedAnswer` or `busyAnswer`. Every message is at most
/// `maxMessageLength` bytes, well under the pre-authentication limit (`maxHandshakeMessageLength`,
/// 512 bytes, in Handshake).
public enum PairingLayout {
    /// P1's first byte, ASCII 'P': says "this connection pairs" to a receiver that pairs.
    public static let modeByte: UInt8 = 0x50
    /// Bytes of the session id the sender draws (CPace's `sid`).
    public static let sidLength = 16
    /// Bytes of a CPace share (an encoded ristretto255 point).
    public static let shareLength = 32
    /// Bytes of an X25519 static public key.
    public static let staticKeyLength = 32
    /// Bytes of a Poly1305 tag.
    public static let tagLength = 16
    /// Bytes of an XChaCha20-Poly1305 nonce.
    public static let nonceLength = 24

    /// The shortest and longest name a side may give itself (bytes, `PairingName`).
    public static let minNameLength = 1
    public static let maxNameLength = 32

    /// P1: mode byte, sid, Ya.
    public static let p1Length = 1 + sidLength + shareLength
    /// The plaintext of P2 and P3: a static key and a name.
    public static let minIntroductionLength = staticKeyLength + minNameLength
    public static let maxIntroductionLength = staticKeyLength + maxNameLength
    /// P2: Yb, then the sealed introduction.
    public static let minP2Length = shareLength + minIntroductionLength + tagLength
    public static let maxP2Length = shareLength + maxIntroductionLength + tagLength
    /// P3: the sealed introduction.
    public static let minP3Length = minIntroductionLength + tagLength
    public static let maxP3Length = maxIntroductionLength + tagLength
    /// P4: the sealed confirmation.
    public static let p4Length = pinnedConfirmation.count + tagLength
    /// Bytes of the associated data of every AEAD: P1 ‖ Yb.
    public static let associatedDataLength = p1Length + shareLength
    /// The longest pairing message (P2).
    public static let maxMessageLength = maxP2Length

    /// A one-byte answer in place of P2: the receiver does not pair (the same byte as the
    /// handshake's refusal, protocol.md §3).
    public static let refusedAnswer: UInt8 = 0x00
    /// A one-byte answer in place of P2: the receiver is in another pairing.
    public static let busyAnswer: UInt8 = 0x01

    /// P4's plaintext: "I pinned your key".
    public static let pinnedConfirmation: [UInt8] = [0x01]

    /// CPace's channel identifier `CI`.
    public static let channelIdentifier: [UInt8] = Array("blesend/1 pair".utf8)
    /// The BLAKE2b message that derives the sender's key `k_S` from ISK (P3).
    public static let senderKeyLabel: [UInt8] = Array("blesend/1 pair S".utf8)
    /// The BLAKE2b message that derives the receiver's key `k_R` from ISK (P2, P4).
    public static let receiverKeyLabel: [UInt8] = Array("blesend/1 pair R".utf8)
    /// Bytes of `k_S` and `k_R`.
    public static let directionKeyLength = 32

    /// Nonce counters: the receiver seals P2 with 0 and P4 with 1 under `k_R`; the sender seals P3
    /// with 0 under `k_S`.
    static let p2Counter: UInt64 = 0
    static let p3Counter: UInt64 = 0
    static let p4Counter: UInt64 = 1
}
