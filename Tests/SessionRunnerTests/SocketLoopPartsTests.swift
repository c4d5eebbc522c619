import Pipeline
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

/// The pause for more datagrams after a short batch never runs past the endpoint's deadline.
@Test func aBatchPauseEndsAtTheNextDeadline() {
    let now = Instant(nanoseconds: 1_000_000_000)
    #expect(SocketPort.pauseEnd(now: now, pause: .milliseconds(5), deadline: nil) == now.advanced(by: .milliseconds(5)))
    #expect(SocketPort.pauseEnd(now: now, pause: .milliseconds(5), deadline: now.advanced(by: .milliseconds(2)))
            == now.advanced(by: .milliseconds(2)))
    #expect(SocketPort.pauseEnd(now: now, pause: .milliseconds(5), deadline: now) == nil, "an ack due now goes now")
    #expect(SocketPort.pauseEnd(now: now, pause: .milliseconds(5), deadline: Instant(nanoseconds: 1)) == nil)
    #expect(SocketPort.pauseEnd(now: now, pause: .zero, deadline: nil) == nil)
}
