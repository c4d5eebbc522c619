import CFileCalls
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program that prints something short and exits (`bluetoothd --version`), with a time
/// limit: its standard output, or nil when it cannot be started, fails, or takes too long (then
/// it is killed). Standard input and error are /dev/null.
enum VersionCommand {
    static func output(of path: String, _ arguments: [String], timeout: Duration, limit: Int = 4096) -> String? {
        var ends: [Int32] = [-1, -1]
        // Close-on-exec from the start: a process another thread forks meanwhile must not inherit
        // the write end, or reading would wait for that process instead of ours. (The child's
        // standard output is the dup2'd copy, which does not inherit the flag.)
        guard blesend_pipe_cloexec(&ends) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let deadline = ContinuousClock.now + timeout
        var pid: pid_t = 0
        var started = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
        // ETXTBSY: some process holds the program open for writing this instant (one forked just
        // as the file was written, between its fork and its exec). That passes; try again.
        while started == ETXTBSY && ContinuousClock.now < deadline {
            usleep(10_000)
            started = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
        }
        close(ends[1])
        defer { close(ends[0]) }
        guard started == 0 else { return nil }

        let output = readUntilEnd(ends[0], deadline: deadline, limit: limit)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return nil }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return nil
            }
            usleep(10_000)
        }
        // Exited normally (no signal) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0, let output else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    /// Reads `fd` until end of file, `limit` bytes or the deadline (nil then).
    private static func readUntilEnd(_ fd: Int32, deadline: ContinuousClock.Instant, limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while bytes.count < limit {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return Array(bytes.prefix(limit))
    }
}
