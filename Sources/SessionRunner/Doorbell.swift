import Glibc

/// What wakes a thread blocked in `poll()` when its endpoint has an input (a person's answer): a
/// non-blocking pipe whose read end the poll set holds. Unlike the `WakeSignal`, which sticks once
/// raised, a doorbell is rung any number of times and drained by the loop at each wake-up.
final class Doorbell: Sendable {
    /// Readable while rung and not yet drained.
    let fd: Int32
    private let writeEnd: Int32

    /// Nil when the kernel refuses a pipe (descriptor limit).
    init?() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fd = ends[0]
        writeEnd = ends[1]
    }

    /// Wakes the loop (from any thread). A full pipe already wakes it.
    func ring() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)
    }

    /// Empties the pipe (on the loop's thread, after a wake-up).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    deinit {
        Glibc.close(fd)
        Glibc.close(writeEnd)
    }
}
