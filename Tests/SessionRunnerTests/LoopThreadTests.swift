@testable import SessionRunner
import Testing

/// The thread hand-off keeps no reference to the caller's closure once the caller resumes
/// (`withoutActuallyEscaping` traps if one survives: a race the lab hit once in a few runs).
@Test func aLoopThreadRunsAndReturnsManyTimesOver() async {
    var total = 0
    for i in 0..<3_000 {
        var captured = i
        total += await LoopThread.run {
            captured += 1
            return captured
        }
        #expect(captured == i + 1)
    }
    #expect(total == (1...3_000).reduce(0, +))
}
