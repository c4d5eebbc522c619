import Pipeline
import Testing
@testable import BlesendCLI

/// `blerecv --ask` on a virtual clock: one prompt at a time, and a sender key or device that was
/// refused (or left unanswered) is declined without a prompt for a pause that doubles, capped.
@Suite("First contact gate and back-off")
struct FirstContactGateTests {
    enum Step {
        /// A stranger (its subjects) arrives at `second`; the gate must answer `expect`.
        case arrive(Double, [String], FirstContactGate.Admission)
        /// The open prompt ends at `second`.
        case settle(Double, FirstContactGate.Outcome)
    }

    static func at(_ second: Double) -> Instant { Instant(nanoseconds: UInt64(second * 1e9)) }

    static let alice = ["key a", "device 1"]
    static let bob = ["key b", "device 2"]
    /// Bob's key from Alice's device.
    static let bobOnAlicesDevice = ["key b", "device 1"]

    static let tables: [(String, [Step])] = [
        ("a second stranger while a prompt is open is busy, then asked once it closes", [
            .arrive(0, alice, .ask), .arrive(1, bob, .busy), .arrive(2, alice, .busy),
            .settle(3, .accepted), .arrive(3, bob, .ask),
        ]),
        ("an accepted key owes nothing", [
            .arrive(0, alice, .ask), .settle(5, .accepted), .arrive(5, alice, .ask),
        ]),
        ("a no pauses the key 30 s, then 60, 120: doubling", [
            .arrive(0, alice, .ask), .settle(10, .declined),
            .arrive(11, alice, .pausedUntil(at(40))), .arrive(39.9, alice, .pausedUntil(at(40))),
            .arrive(40, alice, .ask), .settle(40, .declined),
            .arrive(99, alice, .pausedUntil(at(100))), .arrive(100, alice, .ask), .settle(100, .declined),
            .arrive(219, alice, .pausedUntil(at(220))), .arrive(220, alice, .ask),
        ]),
        ("the pause covers the device too: another key from a refused device waits", [
            .arrive(0, alice, .ask), .settle(0, .declined),
            .arrive(1, bobOnAlicesDevice, .pausedUntil(at(30))), .arrive(1, bob, .ask),
        ]),
        ("a refusal does not pause other strangers", [
            .arrive(0, alice, .ask), .settle(0, .declined), .arrive(0, bob, .ask), .settle(1, .accepted),
            .arrive(2, bob, .ask),
        ]),
        ("acceptance forgets earlier refusals", [
            .arrive(0, alice, .ask), .settle(0, .declined), .arrive(30, alice, .ask), .settle(30, .declined),
            .arrive(90, alice, .ask), .settle(90, .accepted), .arrive(90, alice, .ask), .settle(90, .declined),
            .arrive(91, alice, .pausedUntil(at(120))),
        ]),
        ("busy and paused arrivals open no prompt and add no pause", [
            .arrive(0, alice, .ask), .arrive(1, bob, .busy), .settle(2, .declined),
            .arrive(3, alice, .pausedUntil(at(32))), .arrive(3, bob, .ask),
        ]),
    ]

    @Test(arguments: tables.indices)
    func table(_ index: Int) {
        let (name, steps) = Self.tables[index]
        var gate = FirstContactGate()
        for (number, step) in steps.enumerated() {
            switch step {
            case .arrive(let second, let subjects, let expected):
                let admission = gate.admit(subjects, now: Self.at(second))
                #expect(admission == expected, "\(name), step \(number)")
            case .settle(let second, let outcome):
                #expect(gate.isAsking, "\(name), step \(number): nothing to settle")
                gate.settle(outcome, now: Self.at(second))
            }
        }
    }

    @Test func thePauseDoublesUpToAnHour() {
        let pauses = (1...10).map { PromptBackoff.pause(afterStrikes: $0) }
        #expect(pauses.prefix(8) == [.seconds(30), .seconds(60), .seconds(120), .seconds(240), .seconds(480), .seconds(960),
                                     .seconds(1920), .seconds(3600)])
        #expect(pauses.suffix(2) == [.seconds(3600), .seconds(3600)])
        #expect(PromptBackoff.pause(afterStrikes: 1000) == .seconds(3600))
    }

    @Test func aSubjectQuietForAnHourAfterItsPauseStartsAfresh() {
        var backoff = PromptBackoff()
        for second in [0.0, 30, 90, 210] { backoff.declined("key a", now: Self.at(second)) }
        // The fourth pause: 240 s from 210.
        #expect(backoff.pausedUntil("key a", now: Self.at(211)) == Self.at(450))
        backoff.declined("key a", now: Self.at(450 + 3600))
        #expect(backoff.pausedUntil("key a", now: Self.at(4051)) == Self.at(4050 + 30))
    }

    @Test func theTableStaysBounded() {
        var backoff = PromptBackoff()
        for n in 0..<(PromptBackoff.capacity * 2) { backoff.declined("key \(n)", now: Self.at(Double(n))) }
        #expect(backoff.count <= PromptBackoff.capacity)
        // The latest are remembered.
        let last = PromptBackoff.capacity * 2 - 1
        #expect(backoff.pausedUntil("key \(last)", now: Self.at(Double(last))) != nil)
    }
}
