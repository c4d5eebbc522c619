import Keys
import Pairing
import Sodium

/// `pairing-responder`: a stranger's bytes as P1, then P3, into `PairingResponder` (what
/// `blerecv pair` parses from anyone in range, docs/protocol.md §9.4).
///
/// Input: a 1-byte length n, then n bytes of P1, then the rest as P3 (no P3 when the input ends
/// within P1).
///
/// Invariants:
/// - failure is sticky: after a step threw, every later step throws;
/// - a P1 that is taken is 49 bytes and its P2 81..112 bytes;
/// - a P3 that opens is byte for byte the one the fixed sender writes for the same P1 and P2 with
///   the code (the fuzzer cannot seal a P3 of its own without the code), so the peer it names is
///   that sender; and P4 then goes out, 17 bytes.
let pairingResponderTarget = FuzzTarget(
    name: "pairing-responder",
    summary: "P1, then P3, into PairingResponder (blerecv pair)",
    run: runPairingResponder,
    seeds: pairingResponderSeeds)

private enum PairingFixture {
    static let code = PairingPasscode(value: 31_415_926)!
    static let wrongCode = PairingPasscode(value: 31_415_927)!
    static let receiverRandom = Array(BLAKE2b.hash(Array("blesend fuzz pairing receiver scalar".utf8), outputLength: 64))
    static let senderSid = Array(BLAKE2b.hash(Array("blesend fuzz pairing sid".utf8), outputLength: 16))
    static let senderRandom = Array(BLAKE2b.hash(Array("blesend fuzz pairing sender scalar".utf8), outputLength: 64))

    /// Hands out `draws` in order, whatever size is asked (the state machines ask for fixed sizes).
    static func scripted(_ draws: [[UInt8]]) -> PairingRandomSource {
        let box = DrawBox(draws)
        return { count in box.next(count) }
    }

    final class DrawBox: @unchecked Sendable {
        private var draws: [[UInt8]]
        init(_ draws: [[UInt8]]) { self.draws = draws }
        func next(_ count: Int) -> [UInt8] {
            guard !draws.isEmpty else { return [UInt8](repeating: 7, count: count) }
            let draw = draws.removeFirst()
            return draw.count == count ? draw : [UInt8](repeating: 7, count: count)
        }
    }

    static func responder() -> PairingResponder {
        guard let responder = try? PairingResponder(identity: FixedKeys.receiver, name: "desk", code: code,
                                                    random: scripted([receiverRandom])) else {
            fatalError("the fixed pairing responder could not start")
        }
        return responder
    }

    static func initiator(code: PairingPasscode = code) -> PairingInitiator {
        guard let initiator = try? PairingInitiator(identity: FixedKeys.trustedSender, name: "laptop", code: code,
                                                    random: scripted([senderSid, senderRandom])) else {
            fatalError("the fixed pairing initiator could not start")
        }
        return initiator
    }
}

private func runPairingResponder(_ input: [UInt8]) {
    guard let length = input.first else { return }
    let p1 = Array(input.dropFirst().prefix(Int(length)))
    let p3: [UInt8]? = input.count > 1 + Int(length) ? Array(input.dropFirst(1 + Int(length))) : nil
    var responder = PairingFixture.responder()
    let p2: [UInt8]
    do {
        p2 = try responder.readMessage1(p1)
    } catch {
        require((try? responder.readMessage3(p3 ?? [])) == nil, "readMessage3 after a failed readMessage1")
        require((try? responder.message4()) == nil, "message4 after a failed readMessage1")
        return
    }
    require(p1.count == PairingLayout.p1Length, "a \(p1.count)-byte P1 was taken")
    require((81...112).contains(p2.count), "a \(p2.count)-byte P2")
    guard let p3 else { return }
    let peer: PairingPeer
    do {
        peer = try responder.readMessage3(p3)
    } catch {
        require((try? responder.message4()) == nil, "message4 after a failed readMessage3")
        return
    }
    // Opened: only the fixed sender's own P3 for this P1 and P2 can.
    var initiator = PairingFixture.initiator()
    require(initiator.message1() == p1, "a P3 opened under a P1 that is not the fixed sender's")
    guard let genuine = try? initiator.readMessage2(p2) else { fatalError("the fixed sender could not read P2") }
    require(genuine.message3 == p3, "a P3 that is not the sender's own opened")
    require(peer.publicKey == FixedKeys.trustedSender.publicKey && peer.name == "laptop", "P3 named another peer")
    guard let p4 = try? responder.message4() else { fatalError("no P4 after a P3 that opened") }
    require(p4.count == PairingLayout.p4Length, "a \(p4.count)-byte P4")
}

private func pairingResponderSeeds() -> [FuzzSeed] {
    func seed(_ p1: [UInt8], _ p3: [UInt8]?) -> [UInt8] { [UInt8(p1.count)] + p1 + (p3 ?? []) }
    var initiator = PairingFixture.initiator()
    let p1 = initiator.message1()
    var responder = PairingFixture.responder()
    guard let p2 = try? responder.readMessage1(p1), let p3 = try? initiator.readMessage2(p2).message3 else {
        fatalError("the fixed pairing run failed")
    }
    // A sender with another code has another P1 (another generator): the genuine P3 after it
    // must not open.
    var wrong = PairingFixture.initiator(code: PairingFixture.wrongCode)
    let wrongP1 = wrong.message1()
    return [
        FuzzSeed("paired", seed(p1, p3)),
        FuzzSeed("p1-only", seed(p1, nil)),
        FuzzSeed("other-p1-genuine-p3", seed(wrongP1, p3)),
        FuzzSeed("transfer-message-1", [104] + [UInt8](repeating: 0x41, count: 104)),
    ]
}
