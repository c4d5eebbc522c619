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

    public let capacity: Int
    private var slotSize: Int
    private var storage: UnsafeMutableRawBufferPointer
    private let vectors: UnsafeMutableBufferPointer<iovec>
    private let headers: UnsafeMutableBufferPointer<blesend_mmsghdr>

    public init(capacity: Int = 32, slotSize: Int = 512) {
        self.capacity = max(1, capacity)
        self.slotSize = max(1, slotSize)
        storage = .allocate(byteCount: self.capacity * self.slotSize, alignment: 16)
        vectors = .allocate(capacity: self.capacity)
        headers = .allocate(capacity: self.capacity)
    }

    deinit {
        storage.deallocate()
        vectors.deallocate()
        headers.deallocate()
    }

    /// Offers the first `capacity` of `datagrams` to `fd` in one `sendmmsg(MSG_DONTWAIT | MSG_NOSIGNAL)`.
    public func write(_ datagrams: some Collection<[UInt8]>, to fd: Int32) -> Result {
        let batch = datagrams.prefix(capacity)
        guard !batch.isEmpty else { return .sent(0) }
        let longest = batch.lazy.map(\.count).max() ?? 0
        if longest > slotSize {
            storage.deallocate()
            slotSize = longest
            storage = .allocate(byteCount: capacity * slotSize, alignment: 16)
        }
        for (i, datagram) in batch.enumerated() {
            let slot = storage.baseAddress! + i * slotSize
            datagram.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { slot.copyMemory(from: base, byteCount: bytes.count) }
            }
            vectors[i] = iovec(iov_base: slot, iov_len: datagram.count)
            var header = msghdr()
            header.msg_iov = vectors.baseAddress! + i
            header.msg_iovlen = 1
            headers[i] = blesend_mmsghdr(msg_hdr: header, msg_len: 0)
        }
        var count: Int32
        repeat {
            count = blesend_sendmmsg(fd, headers.baseAddress, UInt32(batch.count), Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        } while count < 0 && errno == EINTR
        if count >= 0 { return .sent(Int(count)) }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .wouldBlock : .failed
    }
}
