/// Why a handshake step failed. Once a step has failed, the handshake object is finished:
/// every later call throws `.wrongState` (errors are sticky, as the Noise spec asks).
public enum HandshakeError: Error, Equatable, Sendable {
    /// A method was called out of order, or after a failure.
    case wrongState
    /// A handshake message is shorter than its fixed part.
    case messageTooShort
    /// A handshake message (to write or read) exceeds the Noise limit of 65535 bytes.
    case messageTooLong
    /// An encrypted part did not authenticate (wrong keys, tampering, or not for us).
    case decryptionFailed
    /// A public key has the wrong length or is a low-order point.
    case invalidPublicKey
    /// Our own static secret key is not 32 bytes.
    case invalidKeyLength
    /// The responder answered message 1 with `refusalMessage`.
    case refused
    /// A Noise `CipherState` used its last nonce (2^64 - 1 is reserved).
    case nonceExhausted
}
