import Keys
import MemoryTransport
import Pairing
import Pipeline
import TestDoubles
import Testing
import Transfer
@testable import Session

/// Pairing (docs/protocol.md §9) over the whole stack on a virtual clock: both sessions, the link
/// layer, a perfect simulated link. The receiver's user pins when told (`pins`).
private struct PairingRun {
    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    var sender: Halting<PairingSenderSession>
    var receiver: Halting<PairingReceiverSession>
    var receiverEvents: [PairingReceiverSession.Event] = []
    var senderEvents: [PairingSenderSession.Event] = []

    init(receiverCode: PairingPasscode, typed: PairingPasscode, busy: Bool = false) throws {
        sender = Halting(try PairingSenderSession(identity: senderID, name: "laptop", code: typed, maxDatagramSize: 244, now: .zero),
                         error: nil)
        receiver = Halting(try PairingReceiverSession(identity: receiverID, name: "desk", code: receiverCode, busy: busy,
                                                      maxDatagramSize: 244, now: .zero), error: nil)
    }

    /// Runs both for `duration`; the receiver's user answers `answer` when the sender is proven.
    mutating func run(for duration: Duration = .seconds(120), answer: PairingReceiverSession.Input = .pinned) {
        var network = VirtualNetwork.perfect()
        var receiverEvents: [PairingReceiverSession.Event] = []
        var senderEvents: [PairingSenderSession.Event] = []
        _ = try? network.run(&sender, &receiver, until: Instant.zero.advanced(by: duration)) { a, b, network, _ in
            senderEvents += a.endpoint.takeEvents()
            let fresh = b.endpoint.takeEvents()
            receiverEvents += fresh
            if fresh.contains(where: { if case .senderProven = $0 { true } else { false } }), b.error == nil {
                do throws(SessionError) { try b.endpoint.take(answer, now: network.now) } catch { b.error = error }
                receiverEvents += b.endpoint.takeEvents()
            }
            return (a.error != nil || a.endpoint.status == .settled) && (b.error != nil || b.endpoint.status >= .complete)
        }
        self.receiverEvents += receiverEvents
        self.senderEvents += senderEvents
    }
}

@Test func twoMachinesPairByTheCodeAndEachHoldsTheOthersKey() throws {
    let code = PairingPasscode.random()
    var run = try PairingRun(receiverCode: code, typed: code)
    run.run()
    #expect(run.sender.error == nil && run.receiver.error == nil)
    let receiver = PairingPeer(publicKey: run.receiverID.publicKey, name: "desk")
    let sender = PairingPeer(publicKey: run.senderID.publicKey, name: "laptop")
    #expect(run.sender.endpoint.receiver == receiver)
    #expect(run.senderEvents == [.paired(receiver: receiver)])
    #expect(run.receiverEvents == [.codeTried, .senderProven(sender), .paired(sender: sender)])
}

@Test func aWrongCodeEndsTheSenderWithWrongCodeAndTheReceiverNeverHearsOfTheSender() throws {
    let code = try #require(PairingPasscode(typed: "1234 5678"))
    var run = try PairingRun(receiverCode: code, typed: try #require(PairingPasscode(typed: "1234 5679")))
    run.run()
    #expect(run.sender.error == .pairing(.wrongCode))
    #expect(run.sender.endpoint.receiver == nil && run.senderEvents.isEmpty)
    // The receiver sent P2 (the code is used up) and then waited for a P3 that never came.
    #expect(run.receiverEvents == [.codeTried])
    #expect(run.receiver.error == .handshakeTimeout || run.receiver.error == .linkLost)
}

@Test func aReceiverPairingWithAnotherSenderAnswersBusyAndPinsNothing() throws {
    let code = PairingPasscode.random()
    var run = try PairingRun(receiverCode: code, typed: code, busy: true)
    run.run()
    #expect(run.sender.error == .pairing(.busy))
    #expect(run.receiverEvents == [.answered(.busy)])
    #expect(run.receiver.error == nil && run.receiver.endpoint.status >= .complete)
}

@Test func aKeyTheReceiverCouldNotKeepSendsNoP4AndTheSenderPinsNothing() throws {
    let code = PairingPasscode.random()
    var run = try PairingRun(receiverCode: code, typed: code)
    run.run(answer: .notPinned)
    #expect(run.receiver.error == .pairing(.notPinned))
    #expect(!run.receiverEvents.contains { if case .paired = $0 { true } else { false } })
    #expect(run.sender.endpoint.receiver == nil && run.senderEvents.isEmpty)
    #expect(run.sender.error == .handshakeTimeout || run.sender.error == .linkLost)
}

@Test func aTransferSenderAtAPairingReceiverIsRefusedAndAPairingSenderAtATransferReceiverToo() throws {
    // blesend --to at a receiver running blerecv pair: its message 1 is no P1; the one-byte refusal.
    let receiverID = Identity.generate(), senderID = Identity.generate()
    var network = VirtualNetwork.perfect()
    var ikSender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                                 files: [MemoryFileSource(name: "a.txt", bytes: Array("hi".utf8))])
    try ikSender.connect(maxDatagramSize: 244, now: .zero, wallClock: 1_763_000_000_000_000_000)
    var a = Halting(ikSender, error: nil)
    var b = Halting(try PairingReceiverSession(identity: receiverID, name: "desk", code: .random(), maxDatagramSize: 244, now: .zero),
                    error: nil)
    var events: [PairingReceiverSession.Event] = []
    _ = try? network.run(&a, &b, until: Instant.zero.advanced(by: .seconds(60))) { _, b, _, _ in
        events += b.endpoint.takeEvents()
        return false
    }
    #expect(a.error == .refusedByPeer)
    #expect(events.count == 1 && events.allSatisfy { if case .answered = $0 { true } else { false } })

    // blesend pair at a receiver that is not pairing: its P1 is no message 1; the same refusal.
    var network2 = VirtualNetwork.perfect()
    var c = Halting(try PairingSenderSession(identity: senderID, name: "laptop", code: .random(), maxDatagramSize: 244, now: .zero),
                    error: nil)
    var receiver = ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "alice", key: senderID.publicKey)]),
                                   store: MemoryFileStore())
    try receiver.accept(maxDatagramSize: 244, now: .zero, wallClock: 1_763_000_000_000_000_000)
    var d = Halting(receiver, error: nil)
    _ = try? network2.run(&c, &d, until: Instant.zero.advanced(by: .seconds(60)))
    #expect(c.error == .pairing(.refused))
    #expect(c.endpoint.receiver == nil)
}

/// Nobody answers: each side gives up on its own clock, within `HandshakeTimeout` (10 s) of what
/// it waits for, and pins nothing (docs/protocol.md §9.5).
@Test func eachSideTimesOutOnASilentPeerAndPinsNothing() throws {
    let code = PairingPasscode.random()
    // The receiver never hears P1.
    var network = VirtualNetwork.perfect()
    network.tap = { side, _, bytes in side == .a ? nil : bytes }
    var sender = Halting(try PairingSenderSession(identity: .generate(), name: "laptop", code: code, maxDatagramSize: 244, now: .zero),
                         error: nil)
    var receiver = Halting(try PairingReceiverSession(identity: .generate(), name: "desk", code: code, maxDatagramSize: 244, now: .zero),
                           error: nil)
    var events: [PairingReceiverSession.Event] = []
    var failedAt: (sender: Instant?, receiver: Instant?) = (nil, nil)
    _ = try? network.run(&sender, &receiver, until: Instant.zero.advanced(by: .seconds(60))) { a, b, network, _ in
        events += b.endpoint.takeEvents()
        if a.error != nil, failedAt.sender == nil { failedAt.sender = network.now }
        if b.error != nil, failedAt.receiver == nil { failedAt.receiver = network.now }
        return a.error != nil && b.error != nil
    }
    #expect(sender.error == .handshakeTimeout && receiver.error == .handshakeTimeout)
    #expect(failedAt.sender.map { $0 <= Instant.zero.advanced(by: .seconds(11)) } == true)
    #expect(failedAt.receiver.map { $0 <= Instant.zero.advanced(by: .seconds(11)) } == true)
    #expect(events.isEmpty && sender.endpoint.receiver == nil)
}
