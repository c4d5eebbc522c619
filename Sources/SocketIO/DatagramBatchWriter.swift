import CSocketCalls
import Glibc

/// Writes datagrams to a non-blocking datagram socket with one `sendmmsg`, never waiting: it says
/// how many the socket took, so that the caller keeps the rest (back-pressure, not loss).
public final class DatagramBatchWriter {
    /// What one write did.
    public enum Result: Equatable, Sendable {
        /// The socket took the first `count` datagrams; `count` < the number offered means it is full.
        case sent(Int)
        /// The socket is full: nothing was taken.
        case wouldBlock
        /// The socket failed (the peer is gone).
        case failed
    }

    public var capacity: Int { slots.capacity }
    private let slots: MessageSlots

    public init(capacity: Int = 32, slotSize: Int = 512) {
        slots = MessageSlots(capacity: capacity, slotSize: slotSize)
    }

    /// Offers the first `capacity` of `datagrams` to `fd` in one `sendmmsg(MSG_DONTWAIT | MSG_NOSIGNAL)`.
    public func write(_ datagrams: some Collection<[UInt8]>, to fd: Int32) -> Result {
        let batch = datagrams.prefix(capacity)
        guard !batch.isEmpty else { return .sent(0) }
        slots.grow(to: batch.lazy.map(\.count).max() ?? 0)
        for (i, datagram) in batch.enumerated() {
            datagram.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { slots.slot(i).copyMemory(from: base, byteCount: bytes.count) }
            }
            slots.aim(i, length: datagram.count)
        }
        var count: Int32
        repeat {
            count = blesend_sendmmsg(fd, slots.headers.baseAddress, UInt32(batch.count), Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        } while count < 0 && errno == EINTR
        if count >= 0 { return .sent(Int(count)) }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .wouldBlock : .failed
    }
}
