import CSocketCalls
import Glibc

/// Reads up to `capacity` datagrams from a non-blocking datagram socket with one `recvmmsg`: one
/// system call for a burst instead of one per datagram. A datagram longer than `slotSize` arrives
/// cut short (the framing layer's check rejects it), as with `recv`.
public final class DatagramBatchReader {
    /// What one read found.
    public enum Result: Equatable, Sendable {
        /// At least one datagram (an empty one included), oldest first.
        case datagrams([[UInt8]])
        /// Nothing waiting.
        case wouldBlock
        /// The peer hung up or the socket failed, after `before` (possibly none).
        case ended(before: [[UInt8]])
    }

    public var capacity: Int { slots.capacity }
    public var slotSize: Int { slots.slotSize }
    private let slots: MessageSlots

    public init(capacity: Int = 32, slotSize: Int) {
        slots = MessageSlots(capacity: capacity, slotSize: slotSize)
    }

    /// One `recvmmsg(MSG_DONTWAIT)` on `fd`. `recv` reads 0 bytes both for an empty datagram and
    /// at the end of the socket; a 0-byte entry counts as the end only if the peer is gone
    /// (`socketPeerClosed`), and then nothing after it is a datagram.
    public func read(_ fd: Int32) -> Result {
        for i in 0..<capacity { slots.aim(i, length: slotSize) }
        var count: Int32
        repeat {
            count = blesend_recvmmsg(fd, slots.headers.baseAddress, UInt32(capacity), Int32(MSG_DONTWAIT))
        } while count < 0 && errno == EINTR
        if count < 0 {
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .ended(before: [])
        }
        if count == 0 { return .wouldBlock }
        var datagrams: [[UInt8]] = []
        datagrams.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            let length = min(Int(slots.headers[i].msg_len), slotSize)
            if length == 0, socketPeerClosed(fd) { return .ended(before: datagrams) }
            datagrams.append(Array(UnsafeRawBufferPointer(start: slots.slot(i), count: length)))
        }
        return .datagrams(datagrams)
    }
}
