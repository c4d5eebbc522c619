import Synchronization
import Testing
@testable import BlesendCLI

/// Issue 31: the receiver's calls to bluetoothd run side by side up to a limit, a call about a link
/// already being ended is not made twice, and beyond the waiting room a call is turned away.
@Suite("Chore schedule")
struct ChoreScheduleTests {
    enum Step {
        case add(String, key: String?, ChoreSchedule<String>.Decision)
        /// The call with this key finished; the call that starts next, if any.
        case finish(key: String?, starts: String?)
    }

    static let rows: [(String, [Step])] = [
        ("up to two run at once, the third waits and starts when one finishes", [
            .add("a", key: "link 1", .start), .add("b", key: "link 2", .start), .add("c", key: "link 3", .wait),
            .finish(key: "link 2", starts: "c"), .finish(key: "link 1", starts: nil), .add("d", key: nil, .start),
        ]),
        ("a call about a link that one running or waiting covers is dropped", [
            .add("a", key: "link 1", .start), .add("a again", key: "link 1", .covered),
            .add("b", key: "link 2", .start), .add("c", key: "link 3", .wait), .add("c again", key: "link 3", .covered),
            .finish(key: "link 1", starts: "c"), .add("a later", key: "link 1", .wait),
        ]),
        ("calls without a key are never covered", [
            .add("p", key: nil, .start), .add("q", key: nil, .start), .add("r", key: nil, .wait), .add("s", key: nil, .wait),
        ]),
        ("beyond the waiting room a call is turned away; room again once one starts", [
            .add("a", key: nil, .start), .add("b", key: nil, .start), .add("c", key: nil, .wait), .add("d", key: nil, .wait),
            .add("e", key: nil, .full), .add("f", key: "link 9", .full),
            .finish(key: nil, starts: "c"), .add("f", key: "link 9", .wait), .add("g", key: nil, .full),
        ]),
        ("waiting calls start in the order they came", [
            .add("a", key: nil, .start), .add("b", key: nil, .start), .add("c", key: "link 3", .wait), .add("d", key: nil, .wait),
            .finish(key: nil, starts: "c"), .finish(key: "link 3", starts: "d"), .finish(key: nil, starts: nil),
            .finish(key: nil, starts: nil), .add("e", key: nil, .start), .add("f", key: nil, .start), .add("g", key: nil, .wait),
        ]),
    ]

    @Test(arguments: rows)
    func schedule(_ name: String, _ steps: [Step]) {
        var schedule = ChoreSchedule<String>(concurrency: 2, capacity: 2)
        for (i, step) in steps.enumerated() {
            switch step {
            case .add(let job, let key, let want):
                #expect(schedule.add(job, key: key) == want, "\(name): step \(i), \(job)")
            case .finish(let key, let starts):
                #expect(schedule.finished(key: key)?.job == starts, "\(name): step \(i)")
            }
        }
        #expect(schedule.running <= 2)
    }

    /// The runner: four calls that each wait to be released run two at a time, all finish, and a
    /// fifth beyond the waiting room is turned away.
    @Test func peripheralCallsRunSideBySideAndFinish() async throws {
        let started = Mutex<[String]>([])
        let turned = Mutex<[String]>([])
        let released = Atomic<Bool>(false)
        let calls = PeripheralCalls(concurrency: 2, capacity: 2, perform: { call in
            guard case .endBareLink(let device) = call else { return }
            started.withLock { $0.append(device) }
            while !released.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(10)) }
        }, turnAway: { call in
            if case .endBareLink(let device) = call { turned.withLock { $0.append(device) } }
        })
        for device in ["a", "b", "c", "d", "e"] { calls.submit(.endBareLink(device)) }
        calls.submit(.endBareLink("a"))   // covered: not started twice
        #expect(turned.withLock { $0 } == ["e"])
        try await Task.sleep(for: .milliseconds(100))
        #expect(Set(started.withLock { $0 }) == ["a", "b"])
        released.store(true, ordering: .relaxed)
        await calls.finish()
        #expect(started.withLock { $0 }.sorted() == ["a", "b", "c", "d"])
    }
}
