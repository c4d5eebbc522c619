import CFileCalls
import Glibc
import Foundation

/// A private `dbus-daemon` for one test, started with posix_spawn (empty signal mask) under a tiny
/// shell that kills the daemon as soon as our end of its stdin pipe closes (including when the
/// test process dies).
public final class TestBus: @unchecked Sendable {
    public let address: String
    public let daemonPID: pid_t
    private let shellPID: pid_t
    private var controlFD: Int32
    private let directory: String

    public struct SpawnError: Error, CustomStringConvertible { public var description: String }

    /// - Parameter extraRules: dbus-daemon policy rules placed after the allow-all ones (a later
    ///   rule wins), e.g. `<deny send_destination="org.bluez"/>` to have the bus refuse calls to a
    ///   service with `org.freedesktop.DBus.Error.AccessDenied`, as the system bus's policy can.
    public init(extraRules: String = "") throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dbus-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        directory = dir
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(dir)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                \(extraRules)
              </policy>
            </busconfig>
            """
        try config.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)

        var inPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        guard blesend_pipe_cloexec(&inPipe) == 0, blesend_pipe_cloexec(&outPipe) == 0 else { throw SpawnError(description: "pipe") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGCHLD] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let script = #"dbus-daemon --config-file="$0" --nofork --print-address=1 2>/dev/null & echo "pid $!"; read _ ; kill $! 2>/dev/null; wait"#
        let args = ["/bin/sh", "-c", script, dir + "/bus.conf"]
        var cargs: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, &cargs, environ)
        close(inPipe[0])
        close(outPipe[1])
        guard rc == 0 else {
            close(inPipe[1]); close(outPipe[0])
            throw SpawnError(description: "posix_spawn: \(rc)")
        }
        shellPID = pid
        controlFD = inPipe[1]

        // Read "pid N" and the address line.
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        var buf = [UInt8](repeating: 0, count: 512)
        while Date() < deadline {
            let lines = text.split(separator: "\n")
            if lines.count >= 2 { break }
            var pfd = pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 200) > 0 {
                let n = read(outPipe[0], &buf, buf.count)
                if n <= 0 { break }
                text += String(decoding: buf[0..<n], as: UTF8.self)
            }
        }
        close(outPipe[0])
        var daemon: pid_t = 0
        var addr = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pid ") { daemon = pid_t(line.dropFirst(4)) ?? 0 } else if line.hasPrefix("unix:") { addr = String(line) }
        }
        daemonPID = daemon
        address = addr
        if daemon == 0 || addr.isEmpty {
            close(controlFD)
            controlFD = -1
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw SpawnError(description: "dbus-daemon did not start: \(text)")
        }
    }

    /// Kills the daemon abruptly (the bus "goes away").
    public func killDaemon() {
        kill(daemonPID, SIGKILL)
    }

    public func stop() {
        if controlFD >= 0 {
            close(controlFD)
            controlFD = -1
            var status: Int32 = 0
            waitpid(shellPID, &status, 0)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    deinit { stop() }
}
