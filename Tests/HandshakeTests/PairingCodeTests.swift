import CSodium
import Handshake
import Sodium
import Testing

/// BLAKE2b-256 of `"blesend pairing vectors: " + label`: test-only secrets anyone can re-derive.
private func pairingSecret(_ label: String) -> SecureBytes {
    SecureBytes(copying: BLAKE2b.hash(Array("blesend pairing vectors: \(label)".utf8), outputLength: 32))
}

/// A whole handshake between the holders of two static keys, with the given ephemerals; both results.
private func handshake(
    sender: SecureBytes, receiver: SecureBytes, senderEphemeral: SecureBytes, receiverEphemeral: SecureBytes
) throws -> (sender: HandshakeResult, receiver: HandshakeResult) {
    var initiator = try NoiseIKInitiator(
        localStatic: sender, remoteStatic: try X25519.publicKey(for: receiver), prologue: blesendPrologue, ephemeral: senderEphemeral)
    var responder = try NoiseIKResponder(localStatic: receiver, prologue: blesendPrologue, ephemeral: receiverEphemeral)
    _ = try responder.readMessage1(try initiator.writeMessage1(payload: Array("offer".utf8)))
    _ = try initiator.readMessage2(try responder.writeMessage2(payload: Array("accept".utf8)))
    return (try initiator.split(), try responder.split())
}

private func code(_ result: HandshakeResult) -> String { PairingCode.from(handshakeHash: result.handshakeHash) }

@Suite struct PairingCodeTests {
    @Test func bothSidesOfAHandshakeShowTheSameCode() throws {
        for _ in 0..<20 {
            let (sender, receiver) = try handshake(
                sender: X25519.generateSecretKey(), receiver: X25519.generateSecretKey(),
                senderEphemeral: X25519.generateSecretKey(), receiverEphemeral: X25519.generateSecretKey())
            #expect(code(sender) == code(receiver))
            let shown = code(sender)
            #expect(shown.count == 7 && Array(shown)[3] == " ")
            #expect(shown.filter(\.isNumber).count == 6)
        }
    }

    /// A man in the middle gets the receiver to show the code of its own handshake, while the
    /// sender shows the code of the sender's: with fixed keys the codes are fixed, and different.
    @Test func aManInTheMiddleSeesAnotherCode() throws {
        let receiver = pairingSecret("receiver")
        let honest = try handshake(
            sender: pairingSecret("sender"), receiver: receiver,
            senderEphemeral: pairingSecret("sender ephemeral"), receiverEphemeral: pairingSecret("receiver ephemeral"))
        let intruder = try handshake(
            sender: pairingSecret("intruder"), receiver: receiver,
            senderEphemeral: pairingSecret("intruder ephemeral"), receiverEphemeral: pairingSecret("receiver ephemeral 2"))
        #expect(code(honest.sender) != code(intruder.receiver))
    }

    /// The same static keys, one ephemeral changed: another code. In particular the receiver's
    /// ephemeral, chosen after message 1: an initiator that replays or tunes message 1 cannot fix
    /// the code the receiver will show.
    @Test func everyEphemeralChangesTheCode() throws {
        let sender = pairingSecret("sender"), receiver = pairingSecret("receiver")
        let base = try handshake(sender: sender, receiver: receiver,
                                 senderEphemeral: pairingSecret("sender ephemeral"), receiverEphemeral: pairingSecret("receiver ephemeral"))
        let otherSender = try handshake(sender: sender, receiver: receiver,
                                        senderEphemeral: pairingSecret("sender ephemeral 2"), receiverEphemeral: pairingSecret("receiver ephemeral"))
        let otherReceiver = try handshake(sender: sender, receiver: receiver,
                                          senderEphemeral: pairingSecret("sender ephemeral"), receiverEphemeral: pairingSecret("receiver ephemeral 2"))
        #expect(code(base.receiver) != code(otherSender.receiver))
        #expect(code(base.receiver) != code(otherReceiver.receiver))
        #expect(code(otherSender.receiver) != code(otherReceiver.receiver))
    }

    /// Fixed vectors. The handshake: fixed statics, ephemerals and payloads give this hash and this
    /// code. The derivation: recomputed here with libsodium's `crypto_generichash` and the modulo
    /// written out, from a hash of bytes 0x00...0x3f.
    @Test func fixedVectors() throws {
        let (sender, receiver) = try handshake(
            sender: pairingSecret("sender"), receiver: pairingSecret("receiver"),
            senderEphemeral: pairingSecret("sender ephemeral"), receiverEphemeral: pairingSecret("receiver ephemeral"))
        #expect(sender.handshakeHash == receiver.handshakeHash)
        #expect(hexString(sender.handshakeHash) == "622c7781875fa260aeea705feab53bf13adafcf123461e0395f5f15fcaa0af6120423dc9092ff03d412fc962f216d802d1cac9602f2f0875d528392c40ac3c77")
        #expect(code(sender) == "199 021")

        let counting = (0..<64).map { UInt8($0) }
        #expect(PairingCode.from(handshakeHash: counting) == "709 415")
        #expect(sodium_init() >= 0)
        let input = Array("blesend/1 pairing code".utf8) + counting
        var digest = [UInt8](repeating: 0, count: 32)
        #expect(crypto_generichash(&digest, 32, input, UInt64(input.count), nil, 0) == 0)
        var number: UInt64 = 0
        for byte in digest[0..<8] { number = number * 256 + UInt64(byte) }
        #expect(PairingCode.value(handshakeHash: counting) == UInt32(number % 1_000_000))
        #expect(PairingCode.format(UInt32(number % 1_000_000)) == "709 415")
    }

    @Test func codesAreSixDigitsWithLeadingZeros() {
        #expect(PairingCode.format(0) == "000 000")
        #expect(PairingCode.format(12_345) == "012 345")
        #expect(PairingCode.format(999_999) == "999 999")
        #expect(PairingCode.format(1_000_007) == "000 007")
    }

    /// Uniform enough to be a code: over 20,000 random hashes each first digit appears about 2,000
    /// times (standard deviation 42); the bounds are more than 10 deviations out.
    @Test func firstDigitsAreSpreadEvenly() {
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<20_000 {
            let value = PairingCode.value(handshakeHash: Random.bytes(64))
            #expect(value < 1_000_000)
            counts[Int(value / 100_000)] += 1
        }
        #expect(counts.allSatisfy { (1_500...2_500).contains($0) })
    }
}

private func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}
