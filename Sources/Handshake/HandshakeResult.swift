import Sodium

/// What a finished handshake gives the session: one 32-byte key per direction (from Noise
/// `Split()`), the handshake hash (64 bytes, usable as a channel binding), and the peer's static key.
public struct HandshakeResult: Sendable {
    /// Which side of the handshake this result belongs to.
    public enum Role: Sendable, Equatable { case initiator, responder }

    /// Protects sender → receiver records (the first Split() key).
    public let initiatorToResponder: SecureBytes
    /// Protects receiver → sender records (the second Split() key).
    public let responderToInitiator: SecureBytes
    public let handshakeHash: [UInt8]
    public let remoteStatic: [UInt8]
    public let role: Role

    /// The key this side seals with.
    public var sendKey: SecureBytes { role == .initiator ? initiatorToResponder : responderToInitiator }
    /// The key this side opens with.
    public var receiveKey: SecureBytes { role == .initiator ? responderToInitiator : initiatorToResponder }

    /// Noise transport `CipherState`s (ChaChaPoly, 12-byte nonces) for this side. blesend's record
    /// layer uses `sendKey`/`receiveKey` with XChaCha20 instead; these exist to check the Noise
    /// test vectors' transport messages.
    public func transportCiphers() -> (send: CipherState, receive: CipherState) {
        (CipherState(key: sendKey), CipherState(key: receiveKey))
    }
}
