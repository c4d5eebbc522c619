import Pairing
import Pipeline
import Synchronization
import Testing
@testable import BlesendCLI

/// `blerecv pair`'s rules (docs/protocol.md §9, "Rules"), as a table of steps and what the desk
/// must answer.
struct PairingDeskTests {
    /// Codes 1111 0001, 1111 0002, ... in order, so a table can name them.
    private static func codes() -> @Sendable () -> PairingPasscode {
        let next = Mutex(0)
        return {
            let number = next.withLock { value in
                value += 1
                return value
            }
            return PairingPasscode(value: UInt32(11_110_000 + number))!
        }
    }

    private static func at(_ seconds: Int) -> Instant { Instant.zero.advanced(by: .seconds(seconds)) }

    enum Step {
        case arrive(at: Int, expect: PairingDesk.Decision)
        case unused
        case failed(at: Int, nextCodeAt: Int)
        case resume(at: Int, expect: String?)
    }

    static let busy = PairingDesk.Decision.busy
    static func pair(_ code: String) -> PairingDesk.Decision { .pair(PairingPasscode(typed: code)!) }

    static let tables: [(String, [Step])] = [
        ("one attempt at a time: a second sender is told busy", [
            .arrive(at: 0, expect: pair("11110001")), .arrive(at: 1, expect: busy),
        ]),
        ("a connection that never guessed leaves the code good", [
            .arrive(at: 0, expect: pair("11110001")), .unused, .arrive(at: 2, expect: pair("11110001")),
        ]),
        ("a failed attempt burns the code and pauses 5 s, then 10 s, then 20 s", [
            .arrive(at: 0, expect: pair("11110001")), .failed(at: 1, nextCodeAt: 6),
            .arrive(at: 3, expect: busy), .resume(at: 5, expect: nil), .resume(at: 6, expect: "11110002"),
            .arrive(at: 7, expect: pair("11110002")), .failed(at: 8, nextCodeAt: 18),
            .arrive(at: 17, expect: busy), .arrive(at: 18, expect: pair("11110003")), .failed(at: 19, nextCodeAt: 39),
        ]),
        ("nothing after the deadline", [
            .arrive(at: 300, expect: busy),
        ]),
    ]

    @Test(arguments: tables.indices)
    func rules(_ index: Int) throws {
        let (name, steps) = Self.tables[index]
        var desk = PairingDesk(now: .zero, lifetime: .seconds(300), makeCode: Self.codes())
        for (number, step) in steps.enumerated() {
            switch step {
            case .arrive(let at, let expect):
                #expect(desk.linkArrived(now: Self.at(at)) == expect, "\(name), step \(number)")
            case .unused:
                desk.attemptUnused()
            case .failed(let at, let nextCodeAt):
                #expect(desk.attemptFailed(now: Self.at(at)) == Self.at(nextCodeAt), "\(name), step \(number)")
                #expect(desk.code == nil, "\(name), step \(number): the failed code is still on show")
            case .resume(let at, let expect):
                #expect(desk.resumeIfDue(now: Self.at(at))?.display.replacingOccurrences(of: " ", with: "") == expect,
                        "\(name), step \(number)")
            }
        }
    }

    @Test func thePauseStopsGrowingAtFiveMinutes() {
        var desk = PairingDesk(now: .zero, lifetime: .seconds(100_000), makeCode: Self.codes())
        var now = 0
        var last = Duration.zero
        for _ in 0..<12 {
            _ = desk.linkArrived(now: Self.at(now))
            let until = desk.attemptFailed(now: Self.at(now))
            last = until.duration(since: Self.at(now))
            now += Int(last.components.seconds)
            _ = desk.resumeIfDue(now: Self.at(now))
        }
        #expect(last == .seconds(300))
    }
}
