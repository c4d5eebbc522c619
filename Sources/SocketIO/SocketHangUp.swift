import Glibc

/// Whether the other end of the connected datagram socket `fd` is gone. `recv` reads 0 bytes both
/// for an empty datagram and for a closed peer; only the second shows a hang-up at once.
public func socketPeerClosed(_ fd: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN) | pollReadHangUp, revents: 0)
    while true {
        let n = poll(&entry, 1, 0)
        if n < 0, errno == EINTR { continue }
        guard n >= 0 else { return true }
        return entry.revents & (Int16(POLLHUP | POLLERR | POLLNVAL) | pollReadHangUp) != 0
    }
}

/// Linux's POLLRDHUP (the peer shut down its writing side), which Glibc's module does not export.
public let pollReadHangUp: Int16 = 0x2000
