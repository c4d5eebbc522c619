/// What a service tells systemd through `$NOTIFY_SOCKET` (sd_notify(3); `Type=notify` in
/// blerecv.service): one datagram of newline-separated `KEY=value` assignments.
enum SystemdNotice: Equatable {
    /// Started: advertising, and taking senders.
    case ready
    /// The line `systemctl status` shows ("receiving photo.jpg from alice 45 %, 2 links").
    case status(String)
    /// Reading its configuration again (SIGHUP); `ready` follows. `monotonicMicroseconds`:
    /// CLOCK_MONOTONIC now, which systemd 253 and later require with it.
    case reloading(monotonicMicroseconds: UInt64)
    /// Shutting down.
    case stopping

    /// The assignment, as sent. A status is one line: newlines become spaces.
    var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .status(let text): "STATUS=" + text.map { $0.isNewline ? " " : String($0) }.joined()
        case .reloading(let microseconds): "RELOADING=1\nMONOTONIC_USEC=\(microseconds)"
        case .stopping: "STOPPING=1"
        }
    }

    /// One datagram's payload.
    static func datagram(_ notices: [SystemdNotice]) -> [UInt8] {
        Array(notices.map(\.assignment).joined(separator: "\n").utf8)
    }
}
