import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles
import Testing
import Transfer

/// The attacks of docs/threat-model.md at the protocol level, through a relay that controls whole
/// messages. In every case: the right error, and no file (and no temporary) left behind.
struct Attack {
    let pair = Pair()
    let data = bytes(30_000, seed: 3)

    func run(trusted: Bool = true, pinned: PublicKey? = nil, tamper: @escaping RelayRun.Tamper) -> (RelayRun.Outcome, MemoryFileStore) {
        var pair = self.pair
        pair.trusted = trusted
        var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "secret.txt", bytes: data)], pinned: pinned)
        var optionalSender: SenderSession? = sender
        let outcome = RelayRun.run(sender: &optionalSender, receiver: &receiver, tamper: tamper)
        receiver.shutdown()
        _ = sender
        return (outcome, pair.store)
    }
}

func passThrough(_: RelayRun.Direction, _: Int, _ message: [UInt8]) -> [[UInt8]] { [message] }

@Test func anHonestRunThroughTheRelayDelivers() {
    let attack = Attack()
    let (outcome, store) = attack.run(tamper: passThrough)
    #expect(outcome.senderFinished)
    #expect(store.committed["secret.txt"] == attack.data)
}

@Test func anUnknownSenderIsRefusedAndLearnsNothing() {
    let (outcome, store) = Attack().run(trusted: false, tamper: passThrough)
    #expect(outcome.senderError == .refusedByPeer)
    #expect(outcome.receiverEvents.contains { if case .refused(.unknownSender) = $0 { true } else { false } })
    #expect(outcome.seen[.receiverToSender] == [[0x00]], "the refusal is one constant byte")
    #expect(store.committed.isEmpty && store.openTemporaries == 0)
}

@Test func aSenderPinningTheWrongReceiverKeyIsRefused() {
    let (outcome, store) = Attack().run(pinned: Identity.generate().publicKey, tamper: passThrough)
    #expect(outcome.senderError == .refusedByPeer)
    #expect(outcome.receiverEvents.contains(.refused(.malformedHandshake)))
    #expect(store.committed.isEmpty && store.openTemporaries == 0)
}

@Test func anImpostorAnsweringTheHandshakeIsNotAuthenticated() {
    // Someone else answers message 1 with a well-formed but forged message 2.
    let (outcome, _) = Attack().run { direction, index, message in
        guard direction == .receiverToSender, index == 0 else { return [message] }
        return [bytes(message.count, seed: 77)]
    }
    #expect(outcome.senderError == .peerNotAuthenticated)
    #expect(!outcome.senderEvents.contains { if case .authenticated = $0 { true } else { false } })
}

@Test(arguments: ["flip", "replay", "reorder", "drop"])
func tamperedRecordsAreDetected(kind: String) {
    let (outcome, store) = Attack().run { direction, index, message in
        guard direction == .senderToReceiver else { return [message] }
        switch (kind, index) {
        case ("flip", 2):
            var altered = message
            altered[altered.count / 2] ^= 0x40
            return [altered]
        case ("replay", 2): return [message, message]
        case ("reorder", 2): return []
        case ("reorder", 3): return [message, Attack.held]
        case ("drop", 2): return []
        default:
            if kind == "reorder", index == 2 { Attack.held = message }
            return [message]
        }
    }
    guard case .record = outcome.receiverError else {
        Issue.record("\(kind): expected an integrity error, got \(String(describing: outcome.receiverError))")
        return
    }
    #expect(store.committed.isEmpty, "\(kind)")
    #expect(store.openTemporaries == 0, "\(kind)")
}

extension Attack {
    nonisolated(unsafe) static var held: [UInt8] = []
}

@Test func aTruncatedStreamNeverBecomesAFile() {
    // Everything after the third record is swallowed: no `done`, no `bye`.
    let (outcome, store) = Attack().run { direction, index, message in
        direction == .senderToReceiver && index >= 3 ? [] : [message]
    }
    #expect(!outcome.senderFinished)
    #expect(store.committed.isEmpty)
    #expect(store.openTemporaries == 0, "shutdown removes the partial")
}

@Test func aReplayedHandshakeIsRefused() {
    let attack = Attack()
    var pair = attack.pair
    pair.trusted = true
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "one.txt", bytes: [1, 2, 3])])
    var optionalSender: SenderSession? = sender
    let first = RelayRun.run(sender: &optionalSender, receiver: &receiver, tamper: passThrough)
    #expect(first.senderFinished)
    _ = sender
    receiver.linkLost(now: .zero)
    let message1 = first.seen[.senderToReceiver]?.first ?? []

    // The attacker, alone on a new link, replays the captured message 1.
    var link = RelayInjector(receiver: receiver)
    let taken = link.inject(message1)
    #expect(taken)
    #expect(link.events.contains { if case .refused(.replayedHandshake) = $0 { true } else { false } })
    #expect(link.answers == [[0x00]])
    #expect(pair.store.committed.keys.sorted() == ["one.txt"])
}

@Test func aHandshakeThatNeverFinishesTimesOut() throws {
    let pair = Pair()
    var (_, receiver) = pair.endpoints(files: [])
    try receiver.accept(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    #expect(throws: Never.self) { try receiver.handleTimers(now: Instant.zero.advanced(by: .seconds(9))) }
    #expect(throws: SessionError.handshakeTimeout) { try receiver.handleTimers(now: Instant.zero.advanced(by: .seconds(10))) }
    receiver.linkLost(now: .zero)
    #expect(pair.store.openTemporaries == 0)
}
