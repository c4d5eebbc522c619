/// The Noise prologue of blesend version 1 (protocol.md, "Constants").
public let blesendPrologue: [UInt8] = Array("blesend/1".utf8)

/// What a receiver sends instead of message 2 when message 1 fails in any way (protocol.md §3).
public let refusalMessage: [UInt8] = [0x00]

/// The full Noise protocol name; its bytes seed the handshake hash.
public let noiseProtocolName = "Noise_IK_25519_ChaChaPoly_BLAKE2b"

/// The largest Noise message, handshake or transport (Noise spec §3).
public let noiseMaxMessageLength = 65535

/// Sizes in the IK messages.
enum IKLayout {
    static let publicKeyLength = 32
    static let tagLength = 16
    /// e, encrypted s, and the tag of the (possibly empty) payload.
    static let message1Overhead = publicKeyLength + (publicKeyLength + tagLength) + tagLength
    /// e and the tag of the (possibly empty) payload.
    static let message2Overhead = publicKeyLength + tagLength
}
