import Durable
import TestDoubles
import Testing

/// `blesend pair`'s failed attempts on disk (docs/protocol.md §9.5).
@Test func failedAttemptsReadBackAndASuccessEmptiesThem() throws {
    let disk = SimulatedDisk()
    let failures = try PairingFailures(disk: disk)
    #expect(failures.times.isEmpty)
    try failures.failed(at: 1_700_000_000)
    try failures.failed(at: 1_700_000_010)
    #expect(try PairingFailures(disk: disk).times == [1_700_000_000, 1_700_000_010])
    try failures.succeeded()
    #expect(try PairingFailures(disk: disk).times.isEmpty)
}

@Test func theRecordOfFailuresStaysBounded() throws {
    let disk = SimulatedDisk()
    let failures = try PairingFailures(disk: disk)
    for i in 0..<500 { try failures.failed(at: 1_700_000_000 + UInt64(i)) }
    let kept = try PairingFailures(disk: disk).times
    let size = try #require(disk.contents(PairingFailures.name)).count
    #expect(size <= 4_096, "\(size) bytes")
    #expect(kept.last == 1_700_000_499 && kept.count >= 10)
}

/// The wait before the next attempt, as a table: (failure times, now, seconds to wait), with the
/// pause doubling from 5 s (docs/protocol.md §9.5).
@Test(arguments: [
    ([UInt64](), UInt64(1_000), UInt64(0)),
    ([1_000], 1_000, 5), ([1_000], 1_004, 1), ([1_000], 1_005, 0),
    ([900, 1_000], 1_000, 10), ([800, 900, 1_000], 1_001, 19),
    ([2_000], 1_000, 5),   // a failure "in the future" (the clock was set back) counts from now
] as [([UInt64], UInt64, UInt64)])
func theWaitFollowsThePause(times: [UInt64], now: UInt64, wait: UInt64) {
    let pause = { (failures: Int) -> Duration in failures == 0 ? .zero : min(.seconds(300), .seconds(5) * (1 << (failures - 1))) }
    #expect(PairingFailures.wait(after: times, now: now, pause: pause) == wait)
}

/// ALICE-style: failures recorded, then a success, stopped by a crash after each step that
/// writes, restarted from each way a power cut may leave the disk: the record always opens, and
/// holds only times that were recorded, in order; every failure whose call returned is there
/// until a success is under way, and none once the success returned.
@Test func aCrashAfterAnyStepLosesNoFailureThatReturned() throws {
    let times: [UInt64] = (0..<6).map { 1_700_000_000 + $0 }
    let clean = SimulatedDisk()
    let workload = { (disk: SimulatedDisk) -> (returned: Int, cleared: Bool) in
        guard let failures = try? PairingFailures(disk: disk) else { return (-1, false) }
        var returned = -1
        for (index, time) in times.enumerated() {
            guard (try? failures.failed(at: time)) != nil else { return (returned, false) }
            returned = index
        }
        return (returned, (try? failures.succeeded()) != nil)
    }
    _ = workload(clean)
    for crashAfter in 0..<clean.steps {
        for loss in SimulatedDisk.Loss.allCases {
            let disk = SimulatedDisk()
            disk.crashAfter = crashAfter
            let (returned, cleared) = workload(disk)
            let context = "crash after step \(crashAfter), \(loss)"
            let read = try PairingFailures(disk: disk.afterPowerCut(loss)).times
            #expect(read.allSatisfy(times.contains) && read == read.sorted(), "\(context): \(read)")
            if cleared { #expect(read.isEmpty, "\(context): a success that returned left \(read)") }
            // (A crash inside the success, after every failure returned, may leave either state.)
            if returned >= 0 && returned < times.count - 1 {
                #expect(read.contains(times[returned]), "\(context): lost failure \(returned): \(read)")
            }
        }
    }
}
