import Handshake
import Testing

@Suite struct HandshakeReplayGuardTests {
    struct Step: Sendable, CustomTestStringConvertible {
        let peer: UInt8
        let timestamp: UInt64
        let accepted: Bool
        var testDescription: String { "peer \(peer) t=\(timestamp) → \(accepted)" }
    }

    /// One table, run in order against one guard.
    static let table: [Step] = [
        Step(peer: 1, timestamp: 100, accepted: true),    // first from peer 1
        Step(peer: 1, timestamp: 100, accepted: false),   // exact replay
        Step(peer: 1, timestamp: 99, accepted: false),    // older
        Step(peer: 1, timestamp: 101, accepted: true),    // newer
        Step(peer: 2, timestamp: 50, accepted: true),     // other peers are independent
        Step(peer: 2, timestamp: 50, accepted: false),
        Step(peer: 1, timestamp: 101, accepted: false),
        Step(peer: 3, timestamp: 0, accepted: true),      // zero is fine the first time
        Step(peer: 3, timestamp: 0, accepted: false),
        Step(peer: 1, timestamp: .max, accepted: true),
        Step(peer: 1, timestamp: .max, accepted: false),  // nothing beats the maximum
    ]

    @Test func table() {
        var guardian = HandshakeReplayGuard()
        for (index, step) in Self.table.enumerated() {
            let peer = [UInt8](repeating: step.peer, count: 32)
            let accepted = guardian.accept(timestamp: step.timestamp, from: peer)
            #expect(accepted == step.accepted, "step \(index): \(step.testDescription)")
        }
    }

    @Test func memoryIsBoundedAndOldestIsEvicted() {
        var guardian = HandshakeReplayGuard(capacity: 3)
        func peer(_ n: Int) -> [UInt8] { [UInt8(n)] + [UInt8](repeating: 0, count: 31) }
        func accept(_ timestamp: UInt64, from peer: [UInt8]) -> Bool { guardian.accept(timestamp: timestamp, from: peer) }
        #expect(accept(10, from: peer(1)))
        #expect(accept(10, from: peer(2)))
        #expect(accept(10, from: peer(3)))
        #expect(accept(11, from: peer(1)))   // peer 1 is now the most recent
        #expect(accept(10, from: peer(4)))   // evicts peer 2, the oldest
        #expect(guardian.count == 3)
        #expect(!accept(11, from: peer(1)))  // still remembered
        #expect(!accept(10, from: peer(3)))  // still remembered
        #expect(accept(10, from: peer(2)))   // forgotten, so accepted again
        #expect(guardian.count == 3)
    }

    @Test func manyAcceptsStayBounded() {
        var guardian = HandshakeReplayGuard(capacity: 4)
        for t in 1...10_000 {
            let accepted = guardian.accept(timestamp: UInt64(t), from: [UInt8(t % 7)])
            #expect(accepted)
        }
        #expect(guardian.count == 4)
        #expect(HandshakeReplayGuard().capacity == 4096)
    }

    /// A timestamp far ahead of the receiver's clock is neither accepted nor remembered, so the
    /// honest timestamps that follow still pass (it used to lock the key out until a restart).
    @Test func timestampsAheadOfTheClockAreRefusedAndForgotten() {
        var guardian = HandshakeReplayGuard()
        let peer = [UInt8](repeating: 7, count: 32)
        let clock: UInt64 = 1_763_000_000_000_000_000
        let limit = UInt64(HandshakeReplayGuard.maxTimestampAhead.components.seconds) * 1_000_000_000
        #expect(guardian.judge(timestamp: .max, from: peer, wallClock: clock) == .ahead(nanoseconds: .max - clock))
        #expect(guardian.judge(timestamp: clock + limit + 1, from: peer, wallClock: clock) == .ahead(nanoseconds: limit + 1))
        #expect(guardian.count == 0)
        #expect(guardian.judge(timestamp: clock - 5, from: peer, wallClock: clock) == .fresh, "a sender whose clock lags is fine")
        #expect(guardian.judge(timestamp: clock + limit, from: peer, wallClock: clock) == .fresh, "the bound itself is allowed")
        #expect(guardian.judge(timestamp: clock + limit, from: peer, wallClock: clock + 1) == .replayed)
        #expect(guardian.judge(timestamp: 1, from: peer, wallClock: .max) == .replayed, "no overflow near the end of time")
    }

    /// First contact: a stranger's message 1 is judged but not remembered (until its key is
    /// trusted), so any number of fresh stranger keys cannot push a trusted peer out of a full table.
    @Test func strangersAreJudgedWithoutBeingRemembered() {
        var guardian = HandshakeReplayGuard(capacity: 2)
        let clock: UInt64 = 1_763_000_000_000_000_000
        let trusted = [UInt8](repeating: 1, count: 32)
        #expect(guardian.judge(timestamp: clock, from: trusted, wallClock: clock) == .fresh)
        for n in 2..<100 {
            let stranger = [UInt8](repeating: UInt8(n), count: 32)
            #expect(guardian.judge(timestamp: clock, from: stranger, wallClock: clock, remember: false) == .fresh)
        }
        #expect(guardian.count == 1)
        #expect(guardian.judge(timestamp: clock, from: trusted, wallClock: clock) == .replayed, "the trusted peer is still remembered")
        // Still judged: too far ahead is refused, and an older timestamp than one remembered too.
        #expect(guardian.judge(timestamp: .max, from: [UInt8](repeating: 7, count: 32), wallClock: clock, remember: false) != .fresh)
        #expect(guardian.judge(timestamp: clock - 1, from: trusted, wallClock: clock, remember: false) == .replayed)
    }
}
