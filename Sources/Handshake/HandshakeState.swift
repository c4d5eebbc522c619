import Sodium

/// The Noise `HandshakeState` (spec §5.3) for pattern IK: the symmetric state plus the four keys
/// s, e, rs, re. `NoiseIKInitiator` and `NoiseIKResponder` drive it token by token; this type
/// knows the tokens, they know the order and the message layout.
struct HandshakeState {
    var symmetric: SymmetricState
    let localStatic: SecureBytes
    let localStaticPublic: [UInt8]
    /// Dropped (and so wiped) once the last DH that needs it is done.
    var localEphemeral: SecureBytes?
    let localEphemeralPublic: [UInt8]
    var remoteStatic: [UInt8]?
    var remoteEphemeral: [UInt8]?

    /// Initialize(): protocol name, prologue, and the pre-message `<- s` (the responder's static key).
    init(localStatic: SecureBytes, ephemeral: SecureBytes?, prologue: [UInt8], responderStatic: [UInt8]?) throws(HandshakeError) {
        guard localStatic.count == X25519.keyLength else { throw .invalidKeyLength }
        let ephemeral = ephemeral ?? X25519.generateSecretKey()
        guard ephemeral.count == X25519.keyLength else { throw .invalidKeyLength }
        do {
            localStaticPublic = try X25519.publicKey(for: localStatic)
            localEphemeralPublic = try X25519.publicKey(for: ephemeral)
        } catch {
            throw .invalidKeyLength
        }
        self.localStatic = localStatic
        self.localEphemeral = ephemeral
        self.remoteStatic = responderStatic
        symmetric = SymmetricState(protocolName: Array(noiseProtocolName.utf8))
        symmetric.mixHash(prologue)
        // Pre-message "<- s": both sides hash the responder's static public key.
        symmetric.mixHash(responderStatic ?? localStaticPublic)
    }

    /// Token "e" when writing: our ephemeral public key, hashed.
    mutating func writeEphemeral(into message: inout [UInt8]) {
        message += localEphemeralPublic
        symmetric.mixHash(localEphemeralPublic)
    }

    /// Token "e" when reading.
    mutating func readEphemeral(_ bytes: ArraySlice<UInt8>) {
        remoteEphemeral = Array(bytes)
        symmetric.mixHash(bytes)
    }

    /// Tokens "es", "ss", "ee", "se": MixKey(DH(secret, public)).
    mutating func mixDH(secret: SecureBytes?, publicKey: [UInt8]?) throws(HandshakeError) {
        guard let secret, let publicKey else { throw .wrongState }
        let shared: SecureBytes
        do {
            shared = try X25519.sharedSecret(secret: secret, publicKey: publicKey)
        } catch {
            throw .invalidPublicKey
        }
        symmetric.mixKey(shared)
    }

    /// Token "s" when writing: our static public key, encrypted.
    mutating func writeStatic(into message: inout [UInt8]) throws(HandshakeError) {
        message += try symmetric.encryptAndHash(localStaticPublic)
    }

    /// Token "s" when reading: the peer's static public key.
    mutating func readStatic(_ bytes: ArraySlice<UInt8>) throws(HandshakeError) {
        let key = try symmetric.decryptAndHash(bytes)
        guard key.count == X25519.keyLength else { throw .invalidPublicKey }
        remoteStatic = key
    }

    /// The result for `role`, from Split().
    func result(role: HandshakeResult.Role) throws(HandshakeError) -> HandshakeResult {
        guard let remoteStatic else { throw .wrongState }
        let (initiatorToResponder, responderToInitiator) = symmetric.split()
        return HandshakeResult(
            initiatorToResponder: initiatorToResponder, responderToInitiator: responderToInitiator,
            handshakeHash: symmetric.handshakeHash, remoteStatic: remoteStatic, role: role)
    }
}
