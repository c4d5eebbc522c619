import Glibc
import Pipeline
import SocketIO

/// One `poll()` over the loop's descriptors: the inbound socket (readable), the outbound socket
/// (writable, only while the loop has something the socket refused), the wake signal, and the
/// doorbell (an input for the endpoint).
enum SocketPoll {
    struct Readiness: Equatable {
        /// Datagrams waiting, or the peer hung up or the socket failed (a read then says which).
        var inboundReadable = false
        /// Room to send, or the socket failed (a send then says so).
        var outboundWritable = false
        var woken = false
        /// The doorbell rang: an input waits for the endpoint.
        var rung = false
    }

    static func wait(inbound: Int32, outbound: Int32?, wake: Int32, doorbell: Int32? = nil, timeout: Duration) -> Readiness {
        let read = Int16(POLLIN)
        let write = Int16(POLLOUT)
        let trouble = Int16(POLLHUP | POLLERR | POLLNVAL)
        var entries = [pollfd(fd: wake, events: read, revents: 0),
                       pollfd(fd: inbound, events: read, revents: 0)]
        if let outbound {
            if outbound == inbound {
                entries[1].events |= write
            } else {
                entries.append(pollfd(fd: outbound, events: write, revents: 0))
            }
        }
        let doorbellIndex = entries.count
        if let doorbell { entries.append(pollfd(fd: doorbell, events: read, revents: 0)) }
        var result = Readiness()
        let n = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds(timeout)) }
        guard n > 0 else { return result }  // timeout, or EINTR: the loop comes round again
        result.woken = entries[0].revents != 0
        if doorbell != nil { result.rung = entries[doorbellIndex].revents != 0 }
        result.inboundReadable = entries[1].revents & (read | trouble) != 0
        if let outbound {
            let entry = outbound == inbound ? entries[1] : entries[2]
            result.outboundWritable = entry.revents & (write | trouble) != 0
        }
        return result
    }

    /// Sleeps until `until`, or until the wake descriptor becomes readable.
    static func pause(wake: Int32, until: Instant, clock: some EndpointClock) {
        let now = clock.now
        guard until > now else { return }
        var entry = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, milliseconds(until.duration(since: now)))
    }

    /// `poll`'s timeout: whole milliseconds, rounded up so that a deadline is never woken for early.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let nanoseconds = max(duration.nanoseconds, 0)
        return Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
    }
}
