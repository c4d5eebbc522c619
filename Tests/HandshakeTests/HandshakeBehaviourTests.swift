import Handshake
import Sodium
import Testing

/// A sender and receiver with fresh keys; the sender pins `pinnedReceiverKey` (the real one by default).
struct Peers {
    let senderStatic = X25519.generateSecretKey()
    let receiverStatic = X25519.generateSecretKey()
    var senderPublic: [UInt8] { (try? X25519.publicKey(for: senderStatic)) ?? [] }
    var receiverPublic: [UInt8] { (try? X25519.publicKey(for: receiverStatic)) ?? [] }

    func initiator(pinning key: [UInt8]? = nil) throws -> NoiseIKInitiator {
        try NoiseIKInitiator(localStatic: senderStatic, remoteStatic: key ?? receiverPublic, prologue: blesendPrologue)
    }

    func responder() throws -> NoiseIKResponder {
        try NoiseIKResponder(localStatic: receiverStatic, prologue: blesendPrologue)
    }
}

@Suite struct HandshakeBehaviourTests {
    @Test func fullHandshakeAgreesOnKeys() throws {
        let peers = Peers()
        var initiator = try peers.initiator()
        var responder = try peers.responder()
        let message1 = try initiator.writeMessage1(payload: Array("offer".utf8))
        #expect(message1.count == 96 + 5)
        let (sender, offer) = try responder.readMessage1(message1)
        #expect(sender == peers.senderPublic)
        #expect(offer == Array("offer".utf8))
        let message2 = try responder.writeMessage2(payload: Array("accept".utf8))
        #expect(message2.count == 48 + 6)
        #expect(try initiator.readMessage2(message2) == Array("accept".utf8))

        let sent = try initiator.split(), received = try responder.split()
        #expect(sent.sendKey == received.receiveKey)
        #expect(sent.receiveKey == received.sendKey)
        #expect(sent.sendKey != sent.receiveKey)
        #expect(sent.sendKey.count == 32 && sent.receiveKey.count == 32)
        #expect(sent.handshakeHash == received.handshakeHash && sent.handshakeHash.count == 64)
        #expect(sent.remoteStatic == peers.receiverPublic)
        #expect(received.remoteStatic == peers.senderPublic)
    }

    @Test func twoHandshakesGiveDifferentKeys() throws {
        let peers = Peers()
        func run() throws -> HandshakeResult {
            var i = try peers.initiator(), r = try peers.responder()
            _ = try r.readMessage1(try i.writeMessage1(payload: []))
            _ = try i.readMessage2(try r.writeMessage2(payload: []))
            return try i.split()
        }
        #expect(try run().sendKey != (try run().sendKey))
    }

    @Test func initiatorPinningTheWrongKeyIsRejectedByTheResponder() throws {
        let peers = Peers()
        let impostorKey = try X25519.publicKey(for: X25519.generateSecretKey())
        var initiator = try peers.initiator(pinning: impostorKey)
        var responder = try peers.responder()
        let message1 = try initiator.writeMessage1(payload: [1, 2, 3])
        #expect(throws: HandshakeError.decryptionFailed) { try responder.readMessage1(message1) }
    }

    @Test func differentProloguesFail() throws {
        let peers = Peers()
        var initiator = try NoiseIKInitiator(localStatic: peers.senderStatic, remoteStatic: peers.receiverPublic,
                                             prologue: Array("blesend/2".utf8))
        var responder = try peers.responder()
        #expect(throws: HandshakeError.decryptionFailed) { try responder.readMessage1(try initiator.writeMessage1(payload: [])) }
    }

    @Test func outOfOrderCallsThrowWrongState() throws {
        let peers = Peers()
        var initiator = try peers.initiator()
        var responder = try peers.responder()
        #expect(throws: HandshakeError.wrongState) { try initiator.split() }
        #expect(throws: HandshakeError.wrongState) { try initiator.readMessage2([UInt8](repeating: 0, count: 48)) }
        #expect(throws: HandshakeError.wrongState) { try responder.writeMessage2(payload: []) }
        #expect(throws: HandshakeError.wrongState) { try responder.split() }

        let message1 = try initiator.writeMessage1(payload: [])
        #expect(throws: HandshakeError.wrongState) { try initiator.writeMessage1(payload: []) }
        #expect(throws: HandshakeError.wrongState) { try initiator.split() }
        _ = try responder.readMessage1(message1)
        #expect(throws: HandshakeError.wrongState) { try responder.readMessage1(message1) }
        #expect(throws: HandshakeError.wrongState) { try responder.split() }
        let message2 = try responder.writeMessage2(payload: [])
        #expect(throws: HandshakeError.wrongState) { try responder.writeMessage2(payload: []) }
        _ = try initiator.readMessage2(message2)
        #expect(throws: HandshakeError.wrongState) { try initiator.readMessage2(message2) }
        #expect(throws: HandshakeError.wrongState) { try initiator.writeMessage1(payload: []) }
        _ = try initiator.split()
        _ = try responder.split()
    }

    @Test func failuresAreSticky() throws {
        let peers = Peers()
        var initiator = try peers.initiator()
        var responder = try peers.responder()
        let message1 = try initiator.writeMessage1(payload: [])
        var tampered = message1
        tampered[40] ^= 1
        #expect(throws: HandshakeError.decryptionFailed) { try responder.readMessage1(tampered) }
        #expect(throws: HandshakeError.wrongState) { try responder.readMessage1(message1) }
        #expect(throws: HandshakeError.wrongState) { try responder.writeMessage2(payload: []) }
    }

    @Test func refusalMessageIsReportedAsRefused() throws {
        let peers = Peers()
        var initiator = try peers.initiator()
        _ = try initiator.writeMessage1(payload: [])
        #expect(throws: HandshakeError.refused) { try initiator.readMessage2(refusalMessage) }
        #expect(throws: HandshakeError.wrongState) { try initiator.split() }
        #expect(refusalMessage == [0x00])
        #expect(blesendPrologue == Array("blesend/1".utf8))
    }

    @Test func everyTamperedByteOfMessage2IsDetected() throws {
        let peers = Peers()
        var responderTemplate = try peers.responder()
        var initiatorTemplate = try peers.initiator()
        _ = try responderTemplate.readMessage1(try initiatorTemplate.writeMessage1(payload: []))
        let message2 = try responderTemplate.writeMessage2(payload: [7, 7])
        for index in message2.indices {
            var initiator = initiatorTemplate   // value copy: same state, independent from here on
            var tampered = message2
            tampered[index] ^= 0x80
            #expect(throws: HandshakeError.self, "byte \(index)") { try initiator.readMessage2(tampered) }
        }
        var initiator = initiatorTemplate
        #expect(try initiator.readMessage2(message2) == [7, 7])
    }

    @Test func truncatedAndGarbageMessagesNeverCrash() throws {
        let peers = Peers()
        var validInitiator = try peers.initiator()
        let message1 = try validInitiator.writeMessage1(payload: Array(repeating: 0x41, count: 150))
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let garbage = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let zeros = [UInt8](repeating: 0, count: length)
            for candidate in [garbage, zeros, Array(message1.prefix(length))] {
                var responder = try peers.responder()
                #expect(throws: HandshakeError.self, "message 1 of \(length) bytes") { try responder.readMessage1(candidate) }

                var initiator = try peers.initiator()
                _ = try initiator.writeMessage1(payload: [])
                let expected: HandshakeError? = candidate == refusalMessage ? .refused : nil
                let error = #expect(throws: HandshakeError.self, "message 2 of \(length) bytes") { try initiator.readMessage2(candidate) }
                if let expected { #expect(error == expected) }
            }
        }
        var responder = try peers.responder()
        #expect(throws: HandshakeError.messageTooShort) { try responder.readMessage1(Array(message1.prefix(95))) }
    }

    @Test func oversizedMessagesAreRefused() throws {
        let peers = Peers()
        var initiator = try peers.initiator()
        #expect(throws: HandshakeError.messageTooLong) { try initiator.writeMessage1(payload: [UInt8](repeating: 0, count: 65535 - 96 + 1)) }
        let largest = try initiator.writeMessage1(payload: [UInt8](repeating: 0, count: 65535 - 96))
        #expect(largest.count == 65535)
        var responder = try peers.responder()
        #expect(throws: HandshakeError.messageTooLong) { try responder.readMessage1(largest + [0]) }
    }

    @Test func badKeyLengthsThrow() throws {
        let peers = Peers()
        #expect(throws: HandshakeError.invalidPublicKey) {
            try NoiseIKInitiator(localStatic: peers.senderStatic, remoteStatic: [1, 2, 3], prologue: blesendPrologue)
        }
        #expect(throws: HandshakeError.invalidKeyLength) {
            try NoiseIKInitiator(localStatic: SecureBytes(count: 31), remoteStatic: peers.receiverPublic, prologue: blesendPrologue)
        }
        #expect(throws: HandshakeError.invalidKeyLength) {
            try NoiseIKResponder(localStatic: SecureBytes(count: 33), prologue: blesendPrologue)
        }
        // A low-order pinned key is caught at the first DH.
        var initiator = try NoiseIKInitiator(localStatic: peers.senderStatic, remoteStatic: [UInt8](repeating: 0, count: 32),
                                             prologue: blesendPrologue)
        #expect(throws: HandshakeError.invalidPublicKey) { try initiator.writeMessage1(payload: []) }
    }

    @Test func transportCiphersTalk() throws {
        let peers = Peers()
        var i = try peers.initiator(), r = try peers.responder()
        _ = try r.readMessage1(try i.writeMessage1(payload: []))
        _ = try i.readMessage2(try r.writeMessage2(payload: []))
        var (iSend, iReceive) = try i.split().transportCiphers()
        var (rSend, rReceive) = try r.split().transportCiphers()
        for n in 0..<3 {
            let there = try iSend.encrypt(associatedData: [], plaintext: [UInt8(n)])
            #expect(try rReceive.decrypt(associatedData: [], ciphertext: there) == [UInt8(n)])
            let back = try rSend.encrypt(associatedData: [], plaintext: [UInt8(n + 10)])
            #expect(try iReceive.decrypt(associatedData: [], ciphertext: back) == [UInt8(n + 10)])
        }
        let replay = try iSend.encrypt(associatedData: [], plaintext: [1])
        _ = try rReceive.decrypt(associatedData: [], ciphertext: replay)
        #expect(throws: HandshakeError.decryptionFailed) { try rReceive.decrypt(associatedData: [], ciphertext: replay) }
    }
}
