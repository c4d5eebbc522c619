import Keys
@testable import Pairing
import Sodium
import TestSupport
import Testing

/// Every message cut short at every length, one byte too long, every byte flipped; bad shares;
/// bad names and keys inside well-sealed messages. Nothing is ever returned from a bad message,
/// and nothing crashes.
@Suite struct PairingMalformedInputTests {
    let sender = labelledIdentity("sender static")
    let receiver = labelledIdentity("receiver static")
    let code = PairingPasscode(value: 4_711_0815)!

    /// One honest run, message by message, with fresh machines for each test to break.
    struct Run {
        var message1: [UInt8] = []
        var message2: [UInt8] = []
        var message3: [UInt8] = []
        var message4: [UInt8] = []
    }

    func honestRun() throws -> Run {
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
        var run = Run()
        run.message1 = initiator.message1()
        run.message2 = try responder.readMessage1(run.message1)
        run.message3 = try initiator.readMessage2(run.message2).message3
        _ = try responder.readMessage3(run.message3)
        run.message4 = try responder.message4()
        try initiator.readMessage4(run.message4)
        return run
    }

    /// Every way to break `message`: each shorter length, one extra byte, each byte flipped.
    static func breakages(of message: [UInt8]) -> [(label: String, bytes: [UInt8])] {
        var broken: [(String, [UInt8])] = (0..<message.count).map { ("cut to \($0)", Array(message.prefix($0))) }
        broken.append(("one extra byte", message + [0]))
        for index in message.indices {
            var flipped = message
            flipped[index] ^= 0x01
            broken.append(("bit 0 of byte \(index) flipped", flipped))
            flipped[index] ^= 0x81
            broken.append(("bit 7 of byte \(index) flipped", flipped))
        }
        return broken
    }

    // MARK: P1 (no tag: a flipped sid or Ya is another run, which the sender then cannot open)

    @Test func brokenMessage1() throws {
        let draws = [labelledBytes("p1 sid", count: 16), labelledBytes("p1 initiator scalar", count: 64)]
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(draws).bytes)
        let message1 = initiator.message1()
        var cases: [(label: String, bytes: [UInt8], flipped: Int?)] = (0..<message1.count).map { ("cut to \($0)", Array(message1.prefix($0)), nil) }
        cases.append(("one extra byte", message1 + [0], nil))
        for index in message1.indices {
            for bit in [0, 7] {
                var flipped = message1
                flipped[index] ^= 1 << bit
                cases.append(("bit \(bit) of byte \(index) flipped", flipped, index))
            }
        }
        let shareStart = 1 + PairingLayout.sidLength
        var answered = 0
        for (label, bytes, flipped) in cases {
            var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
            guard let flipped, flipped > 0 else {
                #expect(throws: PairingError.malformed, "\(label)") { try responder.readMessage1(bytes) }
                continue
            }
            do {
                let message2 = try responder.readMessage1(bytes)
                answered += 1
                // The real sender, which sent the unbroken P1, cannot open this P2.
                var realSender = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(draws).bytes)
                #expect(realSender.message1() == message1)
                #expect(throws: PairingError.wrongCode, "\(label)") { try realSender.readMessage2(message2) }
            } catch {
                // Only a flipped share may fail here, and only as an invalid share.
                #expect(error == .invalidShare && flipped >= shareStart, "\(label)")
            }
        }
        #expect(answered >= 2 * PairingLayout.sidLength)   // every sid flip gives another run
    }

    @Test func message1WithInvalidShares() throws {
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        let prefix = Array(initiator.message1().prefix(1 + PairingLayout.sidLength))
        for share in Self.invalidPoints {
            var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
            #expect(throws: PairingError.invalidShare) { try responder.readMessage1(prefix + share) }
            #expect(throws: PairingError.outOfOrder) { try responder.readMessage3([]) }
        }
    }

    /// The identity, the draft's non-canonical encoding, a negative field element (its lowest bit
    /// set), and all-ones (not reduced): none decodes to a usable share.
    static let invalidPoints: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        bytes(hex: "2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c") ?? [],
        [0x01] + [UInt8](repeating: 0, count: 31),
        [UInt8](repeating: 0xFF, count: 32),
    ]

    // MARK: P2

    @Test func brokenMessage2() throws {
        let run = try honestRun()
        let draws = Self.scriptedInitiatorRun()
        for (label, bytes) in Self.breakages(of: draws.message2) {
            var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(draws.initiatorDraws).bytes)
            _ = initiator.message1()
            #expect(throws: PairingError.self, "\(label)") { try initiator.readMessage2(bytes) }
            #expect(throws: PairingError.outOfOrder, "\(label)") { try initiator.readMessage4(run.message4) }
        }
    }

    /// A P1 and the P2 answering it, with the initiator's draws, so each test can rebuild the
    /// initiator that sent that P1.
    static func scriptedInitiatorRun() -> (initiatorDraws: [[UInt8]], message2: [UInt8]) {
        let sender = labelledIdentity("sender static"), receiver = labelledIdentity("receiver static")
        let code = PairingPasscode(value: 4_711_0815)!
        let draws = [labelledBytes("malformed sid", count: 16), labelledBytes("malformed initiator scalar", count: 64)]
        guard var initiator = try? PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(draws).bytes),
              var responder = try? PairingResponder(identity: receiver, name: "desk", code: code),
              let message2 = try? responder.readMessage1(initiator.message1()) else {
            preconditionFailure("an honest run failed")
        }
        return (draws, message2)
    }

    @Test func message2WithInvalidShares() throws {
        let draws = Self.scriptedInitiatorRun()
        for share in Self.invalidPoints {
            var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(draws.initiatorDraws).bytes)
            _ = initiator.message1()
            let forged = share + draws.message2.dropFirst(PairingLayout.shareLength)
            #expect(throws: PairingError.invalidShare) { try initiator.readMessage2(forged) }
        }
    }

    // MARK: P3

    @Test func brokenMessage3() throws {
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        let responderDraw = labelledBytes("malformed responder scalar", count: 64)
        var responder = try PairingResponder(identity: receiver, name: "desk", code: code, random: ScriptedRandom([responderDraw]).bytes)
        let message1 = initiator.message1()
        let message3 = try initiator.readMessage2(try responder.readMessage1(message1)).message3
        for (label, bytes) in Self.breakages(of: message3) {
            var fresh = try PairingResponder(identity: receiver, name: "desk", code: code, random: ScriptedRandom([responderDraw]).bytes)
            _ = try fresh.readMessage1(message1)
            #expect(throws: PairingError.self, "\(label)") { try fresh.readMessage3(bytes) }
            #expect(throws: PairingError.outOfOrder, "\(label)") { try fresh.message4() }
        }
        // The unbroken one still works on a fresh responder with the same draws.
        var fresh = try PairingResponder(identity: receiver, name: "desk", code: code, random: ScriptedRandom([responderDraw]).bytes)
        _ = try fresh.readMessage1(message1)
        #expect(try fresh.readMessage3(message3).name == "laptop")
    }

    // MARK: P4

    @Test func brokenMessage4() throws {
        let initiatorDraws = [labelledBytes("p4 sid", count: 16), labelledBytes("p4 initiator scalar", count: 64)]
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(initiatorDraws).bytes)
        var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
        let message2 = try responder.readMessage1(initiator.message1())
        _ = try responder.readMessage3(try initiator.readMessage2(message2).message3)
        let message4 = try responder.message4()
        for (label, bytes) in Self.breakages(of: message4) {
            var fresh = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(initiatorDraws).bytes)
            _ = fresh.message1()
            _ = try fresh.readMessage2(message2)
            #expect(throws: PairingError.malformed, "\(label)") { try fresh.readMessage4(bytes) }
            #expect(!fresh.isComplete)
        }
        try initiator.readMessage4(message4)
        #expect(initiator.isComplete)
    }

    /// P2 or P3 sealed as P4 (the right keys, the wrong counter or direction) is not P4.
    @Test func message4MustBeP4() throws {
        let initiatorDraws = [labelledBytes("p4 sid", count: 16), labelledBytes("p4 initiator scalar", count: 64)]
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code, random: ScriptedRandom(initiatorDraws).bytes)
        var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
        let message2 = try responder.readMessage1(initiator.message1())
        let message3 = try initiator.readMessage2(message2).message3
        #expect(throws: PairingError.malformed) { try initiator.readMessage4(Array(message3.prefix(PairingLayout.p4Length))) }
        #expect(throws: PairingError.outOfOrder) { try initiator.readMessage4(try responder.message4()) }
    }

    // MARK: Bad content in well-sealed messages

    static let badNames: [[UInt8]] = [
        [], Array(String(repeating: "x", count: 33).utf8), Array(".hidden".utf8), Array("a/b".utf8), Array("a b".utf8),
        Array("ümlaut".utf8), [0x61, 0x00], Array("..".utf8), Array("tab\t".utf8), [0xFF],
    ]

    /// X25519 keys of low order (and all zero), which the static-key check refuses.
    static let lowOrderKeys: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [0x01] + [UInt8](repeating: 0, count: 31),
        bytes(hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800") ?? [],
        bytes(hex: "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157") ?? [],
        bytes(hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f") ?? [],
    ]

    static var badIntroductions: [(label: String, plaintext: [UInt8])] {
        let goodKey = labelledIdentity("some peer").publicKey.bytes
        return badNames.map { ("name \($0)", goodKey + $0) }
            + lowOrderKeys.map { ("key \(hex($0))", $0 + Array("peer".utf8)) }
            + [("key only", goodKey), ("short key", Array(goodKey.prefix(31)))]
    }

    @Test func message2WithBadNameOrKey() throws {
        for (label, plaintext) in Self.badIntroductions {
            var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
            let message1 = initiator.message1()
            let forged = try PairingForger(code: code).message2(answering: message1, introduction: plaintext)
            #expect(throws: PairingError.malformed, "\(label)") { try initiator.readMessage2(forged) }
        }
        // The forger itself is sound: a good introduction goes through.
        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: code)
        let message1 = initiator.message1()
        let good = try PairingForger(code: code).message2(answering: message1, introduction: receiver.publicKey.bytes + Array("desk".utf8))
        #expect(try initiator.readMessage2(good).peer == PairingPeer(publicKey: receiver.publicKey, name: "desk"))
    }

    @Test func message3WithBadNameOrKey() throws {
        let forger = PairingForger(code: code)
        for (label, plaintext) in Self.badIntroductions {
            let initiator = try forger.initiator(sid: labelledBytes("bad p3 sid", count: 16), seed: labelledBytes("bad p3 scalar", count: 64))
            var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
            let message2 = try responder.readMessage1(initiator.message1)
            let forged = try initiator.message3(answering: message2, introduction: plaintext)
            #expect(throws: PairingError.malformed, "\(label)") { try responder.readMessage3(forged) }
            #expect(throws: PairingError.outOfOrder) { try responder.message4() }
        }
        let initiator = try forger.initiator(sid: labelledBytes("bad p3 sid", count: 16), seed: labelledBytes("bad p3 scalar", count: 64))
        var responder = try PairingResponder(identity: receiver, name: "desk", code: code)
        let message2 = try responder.readMessage1(initiator.message1)
        let good = try initiator.message3(answering: message2, introduction: sender.publicKey.bytes + Array("laptop".utf8))
        #expect(try responder.readMessage3(good) == PairingPeer(publicKey: sender.publicKey, name: "laptop"))
    }
}
