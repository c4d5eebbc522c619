import Handshake
import Keys
import Sodium

/// The keys of the fuzz targets: fixed, so every run is deterministic and the seed corpus (real
/// handshake messages between these parties) stays valid from one run to the next. Test-only keys;
/// derived from a label with BLAKE2b so they look like real keys.
enum FixedKeys {
    /// The wall clock the fuzz targets run at (nanoseconds since the Unix epoch, November 2025).
    static let wallClock: UInt64 = 1_763_000_000_000_000_000
    /// The receiver (Noise responder).
    static let receiver = identity("blesend fuzz receiver")
    /// A sender in the receiver's trust store.
    static let trustedSender = identity("blesend fuzz trusted sender")
    /// A sender the receiver does not know.
    static let strangerSender = identity("blesend fuzz stranger sender")
    /// The trust store: only `trustedSender`, named "alice".
    static let trustedName = "alice"
    static let trust = TrustStore(peers: [TrustStore.Peer(name: trustedName, key: trustedSender.publicKey)])
    /// The name a receiver that asks (first contact) trusts `strangerSender` under once its user accepts it.
    static let approvedName = "newfriend"

    /// Ephemeral secrets, one per role, so a run's handshake messages are always the same bytes.
    static let initiatorEphemeral = secret("blesend fuzz initiator ephemeral")
    static let responderEphemeral = secret("blesend fuzz responder ephemeral")

    static func secret(_ label: String) -> SecureBytes {
        SecureBytes(copying: BLAKE2b.hash(Array(label.utf8), outputLength: X25519.keyLength))
    }

    private static func identity(_ label: String) -> Identity {
        do {
            return try Identity(secretKey: secret(label))
        } catch {
            fatalError("fixed fuzz key \(label) is not a valid X25519 key: \(error)")
        }
    }
}

/// Fresh handshake objects of the fixed parties, made once and copied per input (making one costs
/// two X25519 base-point multiplications; a copy is independent, since the handshake replaces its
/// secrets rather than writing them in place). Read-only; libFuzzer runs one input at a time.
enum HandshakeTemplates {
    nonisolated(unsafe) static let responder: NoiseIKResponder = {
        do {
            return try NoiseIKResponder(localStatic: FixedKeys.receiver.secretKey, prologue: blesendPrologue,
                                        ephemeral: FixedKeys.responderEphemeral)
        } catch {
            fatalError("cannot make the fixed responder: \(error)")
        }
    }()

    nonisolated(unsafe) static let trustedInitiator = initiator(FixedKeys.trustedSender)
    nonisolated(unsafe) static let strangerInitiator = initiator(FixedKeys.strangerSender)

    /// A fresh initiator of `sender` (one of the fixed senders) towards the fixed receiver.
    static func initiator(for sender: Identity) -> NoiseIKInitiator {
        if sender.publicKey == FixedKeys.trustedSender.publicKey { return trustedInitiator }
        if sender.publicKey == FixedKeys.strangerSender.publicKey { return strangerInitiator }
        return initiator(sender)
    }

    private static func initiator(_ sender: Identity) -> NoiseIKInitiator {
        do {
            return try NoiseIKInitiator(localStatic: sender.secretKey, remoteStatic: FixedKeys.receiver.publicKey.bytes,
                                        prologue: blesendPrologue, ephemeral: FixedKeys.initiatorEphemeral)
        } catch {
            fatalError("cannot make the fixed initiator: \(error)")
        }
    }
}

/// A handshake between fixed parties, run once: the keys the record target uses.
enum FixedHandshake {
    /// Payload of message 1 in `result` (any bytes; the record target does not read it).
    static let result: (initiator: HandshakeResult, responder: HandshakeResult) = {
        do {
            var (initiator, responder) = try afterMessage1(payload: [])
            let message2 = try responder.writeMessage2(payload: [])
            _ = try initiator.readMessage2(message2)
            return (try initiator.split(), try responder.split())
        } catch {
            fatalError("the fixed fuzz handshake failed: \(error)")
        }
    }()
}

/// Both fixed parties after message 1 carrying `payload` has gone from the trusted sender to the receiver.
func afterMessage1(payload: [UInt8]) throws -> (initiator: NoiseIKInitiator, responder: NoiseIKResponder) {
    var initiator = try NoiseIKInitiator(
        localStatic: FixedKeys.trustedSender.secretKey, remoteStatic: FixedKeys.receiver.publicKey.bytes,
        prologue: blesendPrologue, ephemeral: FixedKeys.initiatorEphemeral)
    var responder = try NoiseIKResponder(
        localStatic: FixedKeys.receiver.secretKey, prologue: blesendPrologue, ephemeral: FixedKeys.responderEphemeral)
    _ = try responder.readMessage1(try initiator.writeMessage1(payload: payload))
    return (initiator, responder)
}
