import Dispatch
import Glibc
import Pipeline
import SocketIO
import Synchronization

/// The socket half of a `GattLink`: bluetoothd's acquired sockets (`AcquireWrite`, `AcquireNotify`;
/// on the peripheral, the ends of the socket pairs we hand bluetoothd). The inbound one is read by
/// a dispatch read source once someone reads the link; the outbound one takes one ATT value per
/// `send` (non-blocking; on EAGAIN it waits for POLLOUT, never drops). A driver may take both
/// (`handOver`); then this reads and writes neither.
final class GattSocketLink: Sendable {
    /// What the read source does with what it read, and when the socket ended.
    struct ReadHandlers: Sendable {
        var deliver: @Sendable ([[UInt8]]) -> Void
        var ended: @Sendable () -> Void
    }

    private struct State {
        var closed = false
        var inFD: Int32 = -1
        var outFD: Int32 = -1
        /// Someone reads the link: the inbound socket is read by the read source.
        var readingRequested = false
        /// The sockets belong to a driver (`handOver`); `closeWake` is raised when the link closes.
        var handedOver = false
        var closeWake: (any CloseAlarm)?
    }
    private let state = Mutex(State())
    private let waiter = FDWaiter()
    private let queue = DispatchQueue(label: "blesend.gattlink.inbound")
    private let reader = Mutex(ReadSource())

    /// The inbound socket's read source, and whether back-pressure has paused it.
    /// (`@unchecked`: only touched under the mutex.)
    private struct ReadSource: @unchecked Sendable {
        var source: (any DispatchSourceRead)?
        var paused = false
    }

    // MARK: Inbound

    /// Takes ownership of `fd` as the inbound socket, replacing (closing) an earlier one; reads it
    /// at once when someone already reads the link. False (and `fd` closed) once closed.
    func attachInbound(fd: Int32, handlers: ReadHandlers) -> Bool {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let read = state.withLock { s -> Bool? in
            guard !s.closed else { return nil }
            if s.inFD >= 0 { Glibc.close(s.inFD) }
            s.inFD = fd
            return s.readingRequested && !s.handedOver
        }
        guard let read else {
            Glibc.close(fd)
            return false
        }
        if read { startReadSource(fd, handlers) }
        return true
    }

    /// Starts reading the inbound socket (at the link's first `receive`); later calls do nothing.
    func startReading(_ handlers: ReadHandlers) {
        let fd = state.withLock { s -> Int32 in
            guard !s.readingRequested else { return -1 }
            s.readingRequested = true
            return s.closed || s.handedOver ? -1 : s.inFD
        }
        if fd >= 0 { startReadSource(fd, handlers) }
    }

    /// Reads `fd` until the other end closes it. An empty datagram is handed up like any other.
    ///
    /// One persistent read source per socket: each readiness event drains everything waiting and
    /// hands it over at once. (A one-shot source per wait costs several system calls and a thread
    /// hop per datagram, which dominated the receiver's CPU time in the emulated lab.)
    private func startReadSource(_ fd: Int32, _ handlers: ReadHandlers) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        var scratch = [UInt8](repeating: 0, count: 1024)
        source.setEventHandler {
            var batch: [[UInt8]] = []
            var ended = false
            while batch.count < 512 {
                let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    batch.append(Array(scratch[0..<n]))
                    continue
                }
                if n == 0 {
                    // 0 is an empty datagram (a zero-length Write Command: a malformed frame for the
                    // layers above to count and drop) unless the other end (bluetoothd) closed.
                    if socketPeerClosed(fd) {
                        ended = true
                        break
                    }
                    batch.append([])
                    continue
                }
                if errno == EINTR { continue }
                ended = !(errno == EAGAIN || errno == EWOULDBLOCK)
                break
            }
            if !batch.isEmpty { handlers.deliver(batch) }
            if ended {
                source.cancel()
                handlers.ended()
            }
        }
        let replaced = reader.withLock { reader -> (any DispatchSourceRead)? in
            defer { reader = ReadSource(source: source) }
            if reader.paused { reader.source?.resume() }
            return reader.source
        }
        replaced?.cancel()
        source.resume()
    }

    /// Stops (or resumes) reading the inbound socket: bluetoothd buffers meanwhile.
    func setPaused(_ paused: Bool) {
        reader.withLock { reader in
            guard let source = reader.source, reader.paused != paused else { return }
            reader.paused = paused
            if paused { source.suspend() } else { source.resume() }
        }
    }

    // MARK: Outbound

    /// Takes ownership of `fd` as the outbound socket, replacing (closing) an earlier one. False
    /// (and `fd` closed) once closed.
    func attachOutbound(fd: Int32) -> Bool {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let attached = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if s.outFD >= 0 { Glibc.close(s.outFD) }
            s.outFD = fd
            return true
        }
        if !attached { Glibc.close(fd) }
        return attached
    }

    enum Outbound { case none, socket(Int32), handedOver }

    /// Where a datagram would go now.
    var outbound: Outbound {
        state.withLock { s in
            if s.handedOver { return .handedOver }
            return s.outFD >= 0 ? .socket(s.outFD) : .none
        }
    }

    enum WriteResult { case sent, tryAgain, failed }

    /// One datagram into `fd`; `tryAgain` after waiting out a full socket (POLLOUT).
    func write(_ datagram: [UInt8], to fd: Int32) async -> WriteResult {
        let n = datagram.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        if n == datagram.count { return .sent }
        if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS {
            await waiter.wait(fd: fd, forWriting: true)
            return .tryAgain
        }
        return .failed
    }

    // MARK: Handing over, closing

    enum HandOver { case give(DatagramSockets), refuse, wait }

    /// Both sockets for a driver, once both are attached, unless `refused()` (checked under this
    /// half's lock, so that a D-Bus path appearing meanwhile is seen), the link is being read, or
    /// they were handed over already. `wake` is raised when this half closes.
    func handOver(wakingOnClose wake: (any CloseAlarm)?, unless refused: () -> Bool) -> HandOver {
        state.withLock { s in
            if s.closed || s.readingRequested || s.handedOver || refused() { return .refuse }
            guard s.inFD >= 0, s.outFD >= 0 else { return .wait }
            s.handedOver = true
            s.closeWake = wake
            return .give(DatagramSockets(inbound: s.inFD, outbound: s.outFD))
        }
    }

    /// Whether the sockets belong to a driver.
    var handedOver: Bool { state.withLock { $0.handedOver } }

    /// Closes both sockets, stops reading, wakes a writer waiting for room, and raises the
    /// driver's signal.
    func close() {
        let taken = state.withLock { s -> State? in
            guard !s.closed else { return nil }
            defer {
                s.closed = true
                s.inFD = -1
                s.outFD = -1
            }
            return s
        }
        guard let taken else { return }
        taken.closeWake?.raiseClosed()
        waiter.cancelAll()
        reader.withLock { reader in
            if reader.paused { reader.source?.resume() }
            reader.source?.cancel()
            reader = ReadSource()
        }
        if taken.inFD >= 0 { Glibc.close(taken.inFD) }
        if taken.outFD >= 0 { Glibc.close(taken.outFD) }
    }
}
