#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: a datagram to the `AF_UNIX` socket systemd names in
/// `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Nil when the variable is
/// unset (not run by systemd as `Type=notify`). A notice that cannot be sent is dropped: systemd
/// then shows less, and the receiver goes on.
final class SystemdNotifier: Sendable {
    private let address: [UInt8]

    init?(environment: (String) -> String? = KeyLocation.environment) {
        guard let value = environment("NOTIFY_SOCKET"), !value.isEmpty,
              value.hasPrefix("/") || value.hasPrefix("@") else { return nil }
        var bytes = Array(value.utf8)
        // An abstract socket's name starts with a NUL byte where the variable has "@".
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        address = bytes
    }

    func send(_ notices: [SystemdNotice]) {
        let payload = SystemdNotice.datagram(notices)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &target.sun_path) { path in
            for (index, byte) in address.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        _ = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
    }

    /// CLOCK_MONOTONIC in microseconds (for `reloading`).
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
