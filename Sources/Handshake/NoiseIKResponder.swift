import Sodium

/// The receiver's side of `Noise_IK_25519_ChaChaPoly_BLAKE2b` (protocol.md §3), sans-IO:
/// receive → `readMessage1` → check the sender's key and timestamp → `writeMessage2` → `split`.
///
/// If `readMessage1` throws, or the caller rejects the sender, the caller sends
/// `refusalMessage` and closes; it never says which check failed. Calls out of order throw
/// `.wrongState`; after any failure every call throws `.wrongState`.
public struct NoiseIKResponder {
    private enum Stage { case start, readyToWrite, complete, failed }

    private var stage = Stage.start
    private var state: HandshakeState

    /// - Parameters:
    ///   - localStatic: our 32-byte X25519 secret key (the one senders pin).
    ///   - prologue: `blesendPrologue` in blesend.
    ///   - ephemeral: a fixed ephemeral secret, for test vectors only; random when nil.
    public init(localStatic: SecureBytes, prologue: [UInt8], ephemeral: SecureBytes? = nil) throws(HandshakeError) {
        state = try HandshakeState(localStatic: localStatic, ephemeral: ephemeral, prologue: prologue, responderStatic: nil)
    }

    /// `-> e, es, s, ss`: the sender's static public key (not yet vetted: the caller decides
    /// whether it knows it) and the payload.
    public mutating func readMessage1(_ message: [UInt8]) throws(HandshakeError) -> (remoteStatic: [UInt8], payload: [UInt8]) {
        guard stage == .start else { throw .wrongState }
        stage = .failed
        guard message.count >= IKLayout.message1Overhead else { throw .messageTooShort }
        guard message.count <= noiseMaxMessageLength else { throw .messageTooLong }
        let keyLength = IKLayout.publicKeyLength
        let staticEnd = keyLength + keyLength + IKLayout.tagLength
        state.readEphemeral(message[..<keyLength])
        try state.mixDH(secret: state.localStatic, publicKey: state.remoteEphemeral)         // es
        try state.readStatic(message[keyLength..<staticEnd])                                 // s
        try state.mixDH(secret: state.localStatic, publicKey: state.remoteStatic)           // ss
        let payload = try state.symmetric.decryptAndHash(message[staticEnd...])
        guard let remoteStatic = state.remoteStatic else { throw .wrongState }
        stage = .readyToWrite
        return (remoteStatic, payload)
    }

    /// `<- e, ee, se` with `payload`: 48 + payload.count bytes.
    public mutating func writeMessage2(payload: [UInt8]) throws(HandshakeError) -> [UInt8] {
        guard stage == .readyToWrite else { throw .wrongState }
        guard payload.count <= noiseMaxMessageLength - IKLayout.message2Overhead else { throw .messageTooLong }
        stage = .failed
        var message: [UInt8] = []
        message.reserveCapacity(IKLayout.message2Overhead + payload.count)
        state.writeEphemeral(into: &message)
        try state.mixDH(secret: state.localEphemeral, publicKey: state.remoteEphemeral)   // ee
        try state.mixDH(secret: state.localEphemeral, publicKey: state.remoteStatic)      // se
        message += try state.symmetric.encryptAndHash(payload)
        state.localEphemeral = nil
        stage = .complete
        return message
    }

    /// The transport keys; only after `writeMessage2` succeeded.
    public func split() throws(HandshakeError) -> HandshakeResult {
        guard stage == .complete else { throw .wrongState }
        return try state.result(role: .responder)
    }
}
