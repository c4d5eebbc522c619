import Sodium

/// The sender's side of `Noise_IK_25519_ChaChaPoly_BLAKE2b` (protocol.md §3), sans-IO:
/// `writeMessage1` → send, receive → `readMessage2` → `split`.
///
/// Calls out of order throw `.wrongState`. After any failure the value is finished and every call
/// throws `.wrongState`; start a new handshake instead.
public struct NoiseIKInitiator {
    private enum Stage { case start, awaitingMessage2, complete, failed }

    private var stage = Stage.start
    private var state: HandshakeState

    /// - Parameters:
    ///   - localStatic: our 32-byte X25519 secret key.
    ///   - remoteStatic: the receiver's 32-byte public key, known in advance.
    ///   - prologue: `blesendPrologue` in blesend; both sides must agree on it.
    ///   - ephemeral: a fixed ephemeral secret, for test vectors only; random when nil.
    public init(localStatic: SecureBytes, remoteStatic: [UInt8], prologue: [UInt8], ephemeral: SecureBytes? = nil) throws(HandshakeError) {
        guard remoteStatic.count == X25519.keyLength else { throw .invalidPublicKey }
        state = try HandshakeState(localStatic: localStatic, ephemeral: ephemeral, prologue: prologue, responderStatic: remoteStatic)
    }

    /// `-> e, es, s, ss` with `payload`: 96 + payload.count bytes.
    public mutating func writeMessage1(payload: [UInt8]) throws(HandshakeError) -> [UInt8] {
        guard stage == .start else { throw .wrongState }
        guard payload.count <= noiseMaxMessageLength - IKLayout.message1Overhead else { throw .messageTooLong }
        stage = .failed
        var message: [UInt8] = []
        message.reserveCapacity(IKLayout.message1Overhead + payload.count)
        state.writeEphemeral(into: &message)
        try state.mixDH(secret: state.localEphemeral, publicKey: state.remoteStatic)   // es
        try state.writeStatic(into: &message)                                          // s
        try state.mixDH(secret: state.localStatic, publicKey: state.remoteStatic)      // ss
        message += try state.symmetric.encryptAndHash(payload)
        stage = .awaitingMessage2
        return message
    }

    /// `<- e, ee, se`: returns the receiver's payload. Throws `.refused` for `refusalMessage`.
    public mutating func readMessage2(_ message: [UInt8]) throws(HandshakeError) -> [UInt8] {
        guard stage == .awaitingMessage2 else { throw .wrongState }
        stage = .failed
        if message == refusalMessage { throw .refused }
        guard message.count >= IKLayout.message2Overhead else { throw .messageTooShort }
        guard message.count <= noiseMaxMessageLength else { throw .messageTooLong }
        state.readEphemeral(message[..<IKLayout.publicKeyLength])
        try state.mixDH(secret: state.localEphemeral, publicKey: state.remoteEphemeral)   // ee
        try state.mixDH(secret: state.localStatic, publicKey: state.remoteEphemeral)      // se
        let payload = try state.symmetric.decryptAndHash(message[IKLayout.publicKeyLength...])
        state.localEphemeral = nil
        stage = .complete
        return payload
    }

    /// The transport keys; only after `readMessage2` succeeded.
    public func split() throws(HandshakeError) -> HandshakeResult {
        guard stage == .complete else { throw .wrongState }
        return try state.result(role: .initiator)
    }
}
