import Keys
import Pairing
import Sodium
import Testing

/// Two honest sides with the same code: each ends with the other's key and name.
@Suite struct PairingRoundTripTests {
    let sender = Identity.generate()
    let receiver = Identity.generate()

    @Test func bothSidesEndWithEachOthersKeyAndName() throws {
        let code = PairingPasscode.random()
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        var responder = try PairingResponder(identity: receiver, name: "desk-pi.local_2", code: code)

        let message1 = initiator.message1()
        #expect(message1.count == PairingLayout.p1Length && message1[0] == PairingLayout.modeByte)
        let message2 = try responder.readMessage1(message1)
        let (receiverPeer, message3) = try initiator.readMessage2(message2)
        #expect(receiverPeer == PairingPeer(publicKey: receiver.publicKey, name: "desk-pi.local_2"))
        #expect(!initiator.isComplete)
        let senderPeer = try responder.readMessage3(message3)
        #expect(senderPeer == PairingPeer(publicKey: sender.publicKey, name: "laptop"))
        let message4 = try responder.message4()
        #expect(responder.isComplete)
        try initiator.readMessage4(message4)
        #expect(initiator.isComplete)

        #expect(message2.count == PairingLayout.shareLength + 32 + "desk-pi.local_2".utf8.count + PairingLayout.tagLength)
        #expect(message3.count == 32 + "laptop".utf8.count + PairingLayout.tagLength)
        #expect(message4.count == PairingLayout.p4Length)
    }

    @Test func longestNamesStillFitTheHandshakeLimit() throws {
        let code = PairingPasscode.random()
        let longest = String(repeating: "n", count: PairingLayout.maxNameLength)
        var initiator = try PairingInitiator(identity: sender, name: longest, code: code)
        var responder = try PairingResponder(identity: receiver, name: longest, code: code)
        let message2 = try responder.readMessage1(initiator.message1())
        #expect(message2.count == PairingLayout.maxP2Length)
        let (peer, message3) = try initiator.readMessage2(message2)
        #expect(peer.name == longest)
        #expect(message3.count == PairingLayout.maxP3Length)
        #expect(try responder.readMessage3(message3).name == longest)
        try initiator.readMessage4(try responder.message4())
    }

    @Test func everyRunDrawsAFreshSessionAndShare() throws {
        let code = PairingPasscode.random()
        var first = try PairingInitiator(identity: sender, name: "a", code: code)
        var second = try PairingInitiator(identity: sender, name: "a", code: code)
        #expect(first.message1() != second.message1())
        // Asking for P1 again gives the same bytes.
        #expect(first.message1() == first.message1())
    }

    /// The sender typed another code: P2 does not open on the sender, which pins nothing and
    /// sends nothing more; the receiver, given the P3 of a wrong-code initiator, pins nothing.
    @Test func wrongCodeFailsOnBothSides() throws {
        let shown = PairingPasscode(value: 12_345_678)!, typed = PairingPasscode(value: 12_345_679)!
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: typed)
        var responder = try PairingResponder(identity: receiver, name: "desk", code: shown)
        let message1 = initiator.message1()
        let message2 = try responder.readMessage1(message1)
        #expect(throws: PairingError.wrongCode) { try initiator.readMessage2(message2) }
        #expect(throws: PairingError.outOfOrder) { try initiator.readMessage4([UInt8](repeating: 0, count: PairingLayout.p4Length)) }

        // A wrong-code initiator that sealed P3 anyway, with the keys it derived.
        let forger = PairingForger(code: typed)
        let wrongInitiator = try forger.initiator(sid: Array(message1[1..<17]), seed: labelledBytes("wrong-code initiator", count: 64))
        var responder2 = try PairingResponder(identity: receiver, name: "desk", code: shown)
        let answer = try responder2.readMessage1(wrongInitiator.message1)
        let message3 = try wrongInitiator.message3(
            answering: answer, introduction: sender.publicKey.bytes + Array("laptop".utf8))
        #expect(throws: PairingError.wrongCode) { try responder2.readMessage3(message3) }
        #expect(throws: PairingError.outOfOrder) { try responder2.message4() }
        #expect(!responder2.isComplete)
    }

    @Test func oneByteAnswersInPlaceOfMessage2() throws {
        let code = PairingPasscode.random()
        for (answer, error) in [(PairingLayout.refusedAnswer, PairingError.refused), (PairingLayout.busyAnswer, .busy), (0x02, .malformed), (0xFF, .malformed)] {
            var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
            _ = initiator.message1()
            #expect(throws: error) { try initiator.readMessage2([answer]) }
            #expect(throws: PairingError.outOfOrder) { try initiator.readMessage2([answer]) }
        }
    }

    @Test func callsOutOfOrderThrowAndKillTheMachine() throws {
        let code = PairingPasscode.random()
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        #expect(throws: PairingError.outOfOrder) { try initiator.readMessage2([0]) }   // before P1
        #expect(throws: PairingError.outOfOrder) { try initiator.readMessage4([]) }

        var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
        #expect(throws: PairingError.outOfOrder) { try responder.message4() }          // before P3
        #expect(throws: PairingError.outOfOrder) { try responder.readMessage3([]) }    // before P1

        var initiator2 = try PairingInitiator(identity: sender, name: "laptop", code: code)
        var responder2 = try PairingResponder(identity: receiver, name: "desk", code: code)
        let message2 = try responder2.readMessage1(initiator2.message1())
        #expect(throws: PairingError.outOfOrder) { try responder2.readMessage1(initiator2.message1()) }   // P1 twice
        #expect(throws: PairingError.outOfOrder) { try responder2.readMessage3([]) }                      // dead now
        _ = try initiator2.readMessage2(message2)
        #expect(throws: PairingError.outOfOrder) { try initiator2.readMessage2(message2) }              // P2 twice
    }

    @Test func ourOwnNameMustFollowTheRule() {
        let code = PairingPasscode.random()
        for name in ["", String(repeating: "x", count: 33), ".hidden", "a/b", "with space", "ümlaut", "tab\t"] {
            #expect(throws: PairingError.malformed) { try PairingInitiator(identity: sender, name: name, code: code) }
            #expect(throws: PairingError.malformed) { try PairingResponder(identity: receiver, name: name, code: code) }
        }
    }

    @Test func errorCodesAreStable() {
        let all: [PairingError] = [.malformed, .wrongCode, .refused, .busy, .invalidShare, .outOfOrder]
        #expect(all.map(\.code) == ["malformed", "wrongCode", "refused", "busy", "invalidShare", "outOfOrder"])
    }
}
