#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: a datagram to the `AF_UNIX` socket systemd names in
/// `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Nil when the variable is
/// unset (not run by systemd as `Type=notify`). A notice that cannot be sent is dropped: systemd
/// then shows less, and the receiver goes on.
final class SystemdNotifier: Sendable {
    private let path: String

    init?(environment: (String) -> String? = KeyLocation.environment) {
        guard let value = environment("NOTIFY_SOCKET"), !value.isEmpty,
              value.hasPrefix("/") || value.hasPrefix("@"),
              UnixSocketAddress.with(value, { _, _ in true }) != nil else { return nil }
        path = value
    }

    func send(_ notices: [SystemdNotice]) {
        let payload = SystemdNotice.datagram(notices)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = UnixSocketAddress.with(path) { address, length in
            payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
        }
    }

    /// CLOCK_MONOTONIC in microseconds (for `reloading`).
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
