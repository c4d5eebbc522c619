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

/// The longest message either side accepts from its peer before the handshake has completed
/// (protocol.md, `MaxHandshakeMessage`). Message 1 is at most 390 bytes (96 + an 8-byte timestamp
/// + a 5-byte `hello` + an offer with a 255-byte name), message 2 at most 78; anything longer is not a handshake, and
/// an unauthenticated peer gets no more of the receiver's memory than this for an open message.
public let maxHandshakeMessageLength = 512

/// The receive window (in frames) either side grants its peer before the handshake has completed
/// (protocol.md, `HandshakeWindow`). Message 1 takes at most 25 frames at the smallest BLE datagram
/// (20 bytes, MTU 23), so an honest peer never notices; an unauthenticated one can park at most
/// 31 out-of-order frames in the receiver's memory instead of a full window's 255.
public let handshakeReceiveWindow = 32
