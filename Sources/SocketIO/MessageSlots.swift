import CSocketCalls
import Glibc

/// The buffers of one `recvmmsg`/`sendmmsg` call: `capacity` slots of `slotSize` bytes, each with
/// the `iovec` and `mmsghdr` that point at it.
final class MessageSlots {
    let capacity: Int
    private(set) var slotSize: Int
    private var storage: UnsafeMutableRawBufferPointer
    private let vectors: UnsafeMutableBufferPointer<iovec>
    /// The message headers, in slot order, for the system call.
    let headers: UnsafeMutableBufferPointer<blesend_mmsghdr>

    init(capacity: Int, slotSize: Int) {
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

    /// Makes every slot at least `size` bytes long; what the slots held is not kept.
    func grow(to size: Int) {
        guard size > slotSize else { return }
        storage.deallocate()
        slotSize = size
        storage = .allocate(byteCount: capacity * slotSize, alignment: 16)
    }

    /// The first byte of slot `index`.
    func slot(_ index: Int) -> UnsafeMutableRawPointer {
        storage.baseAddress! + index * slotSize
    }

    /// Points message `index` at the first `length` bytes of its slot.
    func aim(_ index: Int, length: Int) {
        vectors[index] = iovec(iov_base: slot(index), iov_len: length)
        var header = msghdr()
        header.msg_iov = vectors.baseAddress! + index
        header.msg_iovlen = 1
        headers[index] = blesend_mmsghdr(msg_hdr: header, msg_len: 0)
    }
}
