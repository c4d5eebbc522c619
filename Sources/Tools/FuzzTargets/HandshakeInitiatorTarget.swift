import Handshake
import Sodium
import Transfer

/// `handshake-initiator`: handshake message 2 into `NoiseIKInitiator.readMessage2`, after the
/// sender wrote message 1 to the fixed receiver (the sender's first parse of the peer's bytes;
/// the peer may be anyone within radio range).
///
/// Invariants:
/// - the refusal byte gives `.refused`; every failure is sticky (`split` throws afterwards);
/// - a message that opens is byte for byte what the real receiver writes for that payload (no other
///   encoding, no other ephemeral key, opens), and both sides then hold the same keys.
let handshakeInitiatorTarget = FuzzTarget(
    name: "handshake-initiator",
    summary: "handshake message 2 into NoiseIKInitiator.readMessage2",
    run: runHandshakeInitiator,
    seeds: handshakeInitiatorSeeds)

/// Both sides right after message 1 (copied per input: their secrets are replaced, never written
/// in place, so copies are independent). Read-only after initialisation; libFuzzer runs one input
/// at a time.
private nonisolated(unsafe) let partiesAfterMessage1: (initiator: NoiseIKInitiator, responder: NoiseIKResponder) = {
    do {
        return try afterMessage1(payload: openingPayload(timestamp: 42, name: "notes.txt", size: 5))
    } catch {
        fatalError("the fixed fuzz handshake failed: \(error)")
    }
}()

/// The real receiver's message 2 carrying `payload`, and its keys.
private func genuineMessage2(payload: [UInt8]) -> (message: [UInt8], keys: HandshakeResult) {
    var responder = partiesAfterMessage1.responder
    do {
        let message = try responder.writeMessage2(payload: payload)
        return (message, try responder.split())
    } catch {
        fatalError("the fixed responder cannot write message 2: \(error)")
    }
}

private func runHandshakeInitiator(_ message: [UInt8]) {
    var initiator = partiesAfterMessage1.initiator
    let payload: [UInt8]
    do {
        payload = try initiator.readMessage2(message)
    } catch {
        if message == refusalMessage { require(error == .refused, "the refusal gave \(error)") }
        require((try? initiator.split()) == nil, "split after a failed readMessage2")
        return
    }
    let genuine = genuineMessage2(payload: payload)
    require(message == genuine.message, "a message 2 that the receiver did not write opened")
    guard let keys = try? initiator.split() else { fatalError("split failed after readMessage2 succeeded") }
    require(keys.initiatorToResponder == genuine.keys.initiatorToResponder
            && keys.responderToInitiator == genuine.keys.responderToInitiator
            && keys.handshakeHash == genuine.keys.handshakeHash
            && keys.remoteStatic == FixedKeys.receiver.publicKey.bytes, "the two sides derived different keys")
}

private func handshakeInitiatorSeeds() -> [FuzzSeed] {
    let id = TransferID(halves: (0x0123_4567_89AB_CDEF, 0x0F1E_2D3C_4B5A_6978))
    let accept = genuineMessage2(payload: TransferMessage.accept(id: id, offset: 0).encoded()).message
    return [
        FuzzSeed("accept", accept),
        FuzzSeed("accept-resume", genuineMessage2(payload: TransferMessage.accept(id: id, offset: 65_536).encoded()).message),
        FuzzSeed("reject-bad-name", genuineMessage2(payload: TransferMessage.reject(id: id, reason: .badName).encoded()).message),
        FuzzSeed("empty-payload", genuineMessage2(payload: []).message),
        FuzzSeed("refusal", refusalMessage),
        FuzzSeed("truncated", Array(accept.prefix(47))),
    ]
}
