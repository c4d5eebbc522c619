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

/// The poll timeout rounds up to whole milliseconds and saturates: a server with nothing pending
/// waits on a deadline in the distant future (this overflowed once).
@Test func pollTimeoutsRoundUpAndSaturate() {
    #expect(SocketPoll.milliseconds(.zero) == 0)
    #expect(SocketPoll.milliseconds(.nanoseconds(1)) == 1)
    #expect(SocketPoll.milliseconds(.milliseconds(3)) == 3)
    #expect(SocketPoll.milliseconds(.nanoseconds(3_000_001)) == 4)
    #expect(SocketPoll.milliseconds(.seconds(-5)) == 0)
    #expect(SocketPoll.milliseconds(Instant.distantFuture.duration(since: .zero)) == Int32.max)
}

/// Issue 31: a mailbox holds at most its capacity; what comes beyond is dropped (as after
/// `close()`) until the pump takes what waits, oldest first.
@Test func aMailboxDropsWhatComesBeyondItsCapacity() throws {
    let mailbox = try #require(Mailbox<Int>(capacity: 3))
    #expect((1...5).map { mailbox.post($0) } == [true, true, true, false, false])
    #expect(mailbox.take() == [1, 2, 3])
    #expect(mailbox.post(6))
    #expect(mailbox.take() == [6])
    mailbox.close()
    #expect(!mailbox.post(7))
    #expect(mailbox.take().isEmpty)
}
