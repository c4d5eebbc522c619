import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// `handshake-responder`: handshake message 1 from an untrusted peer into `NoiseIKResponder`
/// (the receiver's first parse of a stranger's bytes).
///
/// Invariants:
/// - failure is sticky: after `readMessage1` threw, `writeMessage2` and `split` throw `.wrongState`;
/// - a message that opens has exactly 96 + payload bytes and a 32-byte sender key;
/// - a message that opens and claims one of the fixed senders with the fixed initiator ephemeral
///   is byte for byte what that sender writes for the same payload (no second encoding opens),
///   and finishing the handshake with that sender gives both sides the same keys.
let handshakeResponderTarget = FuzzTarget(
    name: "handshake-responder",
    summary: "handshake message 1 into NoiseIKResponder.readMessage1",
    run: runHandshakeResponder,
    seeds: handshakeResponderSeeds)

private let initiatorEphemeralPublic: [UInt8] = {
    do {
        return try X25519.publicKey(for: FixedKeys.initiatorEphemeral)
    } catch {
        fatalError("fixed ephemeral: \(error)")
    }
}()

private func runHandshakeResponder(_ message: [UInt8]) {
    var responder = HandshakeTemplates.responder

    let opened: (remoteStatic: [UInt8], payload: [UInt8])
    do {
        opened = try responder.readMessage1(message)
    } catch {
        require((try? responder.writeMessage2(payload: [])) == nil, "writeMessage2 after a failed readMessage1")
        require((try? responder.split()) == nil, "split after a failed readMessage1")
        return
    }
    require(opened.remoteStatic.count == X25519.keyLength, "sender key of \(opened.remoteStatic.count) bytes")
    require(message.count == 96 + opened.payload.count, "\(message.count)-byte message 1 with a \(opened.payload.count)-byte payload")

    let sender = [FixedKeys.trustedSender, FixedKeys.strangerSender].first { $0.publicKey.bytes == opened.remoteStatic }
    guard let message2 = try? responder.writeMessage2(payload: [0x01]), let keys = try? responder.split() else {
        fatalError("the responder could not answer a message 1 it accepted")
    }
    require(keys.remoteStatic == opened.remoteStatic, "split names another sender")
    guard let sender, Array(message.prefix(32)) == initiatorEphemeralPublic else { return }

    // A known sender with the fixed ephemeral: the only message that opens is the one it writes.
    var initiator = HandshakeTemplates.initiator(for: sender)
    guard let genuine = try? initiator.writeMessage1(payload: opened.payload) else { fatalError("the fixed initiator failed") }
    require(genuine == message, "a message 1 that is not the sender's own encoding opened")
    guard let answer = try? initiator.readMessage2(message2), let initiatorKeys = try? initiator.split() else {
        fatalError("the sender could not read the responder's message 2")
    }
    require(answer == [0x01], "message 2 payload changed")
    require(initiatorKeys.initiatorToResponder == keys.initiatorToResponder
            && initiatorKeys.responderToInitiator == keys.responderToInitiator
            && initiatorKeys.handshakeHash == keys.handshakeHash, "the two sides derived different keys")
}

/// The payload a sender puts in message 1: wall-clock timestamp, then its opening offer.
func openingPayload(timestamp: UInt64, name: String, size: UInt64?) -> [UInt8] {
    var payload: [UInt8] = []
    payload.appendBigEndian(timestamp)
    TransferMessage.offer(.init(id: TransferID(halves: (0x0123_4567_89AB_CDEF, 0x0F1E_2D3C_4B5A_6978)),
                                size: size, name: name)).encode(into: &payload)
    return payload
}

/// Message 1 from `sender` (fixed ephemeral) to `receiverKey`.
func genuineMessage1(from sender: Identity, to receiverKey: [UInt8] = FixedKeys.receiver.publicKey.bytes,
                     payload: [UInt8]) -> [UInt8] {
    do {
        var initiator = receiverKey == FixedKeys.receiver.publicKey.bytes
            ? HandshakeTemplates.initiator(for: sender)
            : try NoiseIKInitiator(localStatic: sender.secretKey, remoteStatic: receiverKey,
                                   prologue: blesendPrologue, ephemeral: FixedKeys.initiatorEphemeral)
        return try initiator.writeMessage1(payload: payload)
    } catch {
        fatalError("cannot write a seed message 1: \(error)")
    }
}

private func handshakeResponderSeeds() -> [FuzzSeed] {
    let opening = openingPayload(timestamp: 1_700_000_000_000_000_000, name: "report.pdf", size: 123_456)
    let trusted = genuineMessage1(from: FixedKeys.trustedSender, payload: opening)
    return [
        FuzzSeed("trusted-opening", trusted),
        FuzzSeed("trusted-empty-payload", genuineMessage1(from: FixedKeys.trustedSender, payload: [])),
        FuzzSeed("trusted-stream-opening", genuineMessage1(from: FixedKeys.trustedSender, payload:
            openingPayload(timestamp: 1, name: "stdin", size: nil))),
        FuzzSeed("stranger-opening", genuineMessage1(from: FixedKeys.strangerSender, payload: opening)),
        FuzzSeed("for-another-receiver", genuineMessage1(from: FixedKeys.trustedSender,
                                                         to: FixedKeys.strangerSender.publicKey.bytes, payload: opening)),
        FuzzSeed("truncated", Array(trusted.prefix(95))),
        FuzzSeed("refusal", refusalMessage),
    ]
}
