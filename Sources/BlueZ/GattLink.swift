import DequeModule
import Dispatch
import Glibc
import Pipeline
import SocketIO
import Synchronization

/// One BLE link as a `DatagramTransport`. Inbound datagrams come from an acquired socket (read pump)
/// or from D-Bus (`WriteValue` calls / `Value` notifications); outbound ones go to an acquired
/// socket (non-blocking; on EAGAIN it waits for POLLOUT, never drops) or to a D-Bus sink.
/// On the central, `send` suspends until some outbound path is attached; on the peripheral, a
/// datagram sent before the peer subscribed to notifications is dropped.
///
/// A driver may take both acquired sockets (`takeSockets`) and read and write them itself; the
/// link then reads neither (its read source starts only when someone first calls `receive`).
public final class GattLink: SocketBackedTransport {
    public typealias Sink = @Sendable ([UInt8]) async throws -> Void

    private struct State {
        var closed = false
        var mtu: Int
        var inFD: Int32 = -1
        var outFD: Int32 = -1
        var sink: Sink?
        var buffer: Deque<[UInt8]> = []
        var receivers: Deque<CheckedContinuation<[UInt8], any Error>> = []
        var outboundWaiters: [CheckedContinuation<Void, Never>] = []
        var onClose: [@Sendable () async -> Void] = []
        var inboundSeen = false
        /// Someone called `receive`: the inbound socket is read by the link's read source.
        var readingRequested = false
        /// A datagram came by D-Bus (`WriteValue`, a `Value` notification) or a D-Bus sink was set.
        var usedDBus = false
        /// The sockets belong to a driver (`takeSockets`); raised when the link closes.
        var handedOver = false
        var closeWake: WakeSignal?
    }
    private let state: Mutex<State>
    private let waiter = FDWaiter()
    private let inboundQueue = DispatchQueue(label: "blesend.gattlink.inbound")
    private let inbound = Mutex(InboundSource())

    /// The read source of the acquired socket, and whether back-pressure has paused it.
    /// (`@unchecked`: only touched under the mutex.)
    private struct InboundSource: @unchecked Sendable {
        var source: (any DispatchSourceRead)?
        var paused = false
    }

    /// The peer's D-Bus device path (`/org/bluez/hci0/dev_...`), when known.
    public let device: String?
    /// Whether our datagrams go out as notifications (the peripheral) rather than Write Commands.
    let sendsNotifications: Bool

    /// How long `takeSockets` waits on the peripheral for the second socket (the central's
    /// `AcquireNotify` follows its `AcquireWrite` at once; a central that never subscribes gets the
    /// async path, where our datagrams are dropped until it does).
    let handOverPatience: Duration

    init(device: String?, mtu: Int, sendsNotifications: Bool, handOverPatience: Duration = .seconds(3)) {
        self.device = device
        self.sendsNotifications = sendsNotifications
        self.handOverPatience = handOverPatience
        self.state = Mutex(State(mtu: mtu))
    }

    /// The largest datagram we may send: notifications carry 2 bytes less than writes (see
    /// `attNotificationSize`).
    public var maxDatagramSize: Int {
        let mtu = state.withLock { $0.mtu }
        return sendsNotifications ? attNotificationSize(mtu: mtu) : attPayloadSize(mtu: mtu)
    }
    /// The largest datagram the peer sends: writes if we notify, notifications if we write.
    public var peerMaxDatagramSize: Int {
        let mtu = state.withLock { $0.mtu }
        return sendsNotifications ? attPayloadSize(mtu: mtu) : attNotificationSize(mtu: mtu)
    }
    public var transportDescription: TransportDescription {
        let mtu = mtu
        return TransportDescription(
            kind: .gatt, sendSize: sendsNotifications ? attNotificationSize(mtu: mtu) : attPayloadSize(mtu: mtu),
            receiveSize: sendsNotifications ? attPayloadSize(mtu: mtu) : attNotificationSize(mtu: mtu), attMTU: mtu)
    }
    /// The ATT MTU last reported by BlueZ.
    public var mtu: Int { state.withLock { $0.mtu } }
    public var isClosed: Bool { state.withLock { $0.closed } }
    /// Whether the peer's writes ever reached this link (an acquired write socket, or a `WriteValue`).
    public var receivedWrites: Bool { state.withLock { $0.inboundSeen } }

    func updateMTU(_ mtu: Int) {
        guard mtu >= 23 else { return }
        state.withLock { $0.mtu = mtu }
    }

    /// Registers work to run once when the link closes (BlueZ clean-up, re-advertising).
    func onClose(_ action: @escaping @Sendable () async -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.closed { return true }
            s.onClose.append(action)
            return false
        }
        if runNow { Task { await action() } }
    }

    // MARK: Inbound

    /// Takes ownership of `fd` as the inbound path. Once someone reads (`receive`), the link reads
    /// it until the other end closes it (then the link closes); until then, or when the sockets
    /// were handed over (`takeSockets`), it is left alone. (A replaced socket handed over is closed:
    /// the driver sees that and ends.)
    func attachInbound(fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let read = state.withLock { s -> Bool? in
            guard !s.closed else { return nil }
            if s.inFD >= 0 { Glibc.close(s.inFD) }
            s.inFD = fd
            s.inboundSeen = true
            return s.readingRequested && !s.handedOver
        }
        guard let read else {
            Glibc.close(fd)
            return
        }
        if read { startReadSource(fd) }
    }

    /// Starts reading the inbound socket, at the first `receive`.
    private func startReading() {
        let fd = state.withLock { s -> Int32 in
            guard !s.readingRequested else { return -1 }
            s.readingRequested = true
            return s.closed || s.handedOver ? -1 : s.inFD
        }
        if fd >= 0 { startReadSource(fd) }
    }

    /// Reads `fd` until the other end closes it. An empty datagram is handed up like any other.
    ///
    /// One persistent read source per socket: each readiness event drains everything waiting and
    /// hands it over at once. (A one-shot source per wait costs several system calls and a thread
    /// hop per datagram, which dominated the receiver's CPU time in the emulated lab.)
    private func startReadSource(_ fd: Int32) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: inboundQueue)
        var scratch = [UInt8](repeating: 0, count: 1024)
        source.setEventHandler { [weak self] in
            guard let self else { return }
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
            if !batch.isEmpty { self.deliver(batch) }
            if ended {
                source.cancel()
                Task { await self.close() }
            }
        }
        let replaced = inbound.withLock { inbound -> (any DispatchSourceRead)? in
            defer { inbound = InboundSource(source: source) }
            if inbound.paused { inbound.source?.resume() }
            return inbound.source
        }
        replaced?.cancel()
        source.resume()
    }

    /// Queues one inbound datagram (from D-Bus). Once the sockets belong to a driver, nobody reads
    /// the queue: the datagram is dropped (the peer's ARQ resends it the way it came before).
    func deliver(_ datagram: [UInt8]) {
        let handedOver = state.withLock { s -> Bool in
            s.inboundSeen = true
            s.usedDBus = true
            return s.handedOver
        }
        if !handedOver { deliver([datagram]) }
    }

    /// Queues inbound datagrams, waking a waiting receiver once. Far behind, the socket is left
    /// unread (bluetoothd then buffers) until the consumer catches up.
    private func deliver(_ datagrams: [[UInt8]]) {
        let (receiver, backlog) = state.withLock { s -> (CheckedContinuation<[UInt8], any Error>?, Int) in
            guard !s.closed else { return (nil, 0) }
            s.buffer.append(contentsOf: datagrams)
            return (s.receivers.popFirst(), s.buffer.count)
        }
        if backlog > Self.pauseBacklog { setInboundPaused(true) }
        // The woken receiver takes the oldest datagram; `receiveAvailable` then takes the rest.
        if let receiver, let first = takeOne() { receiver.resume(returning: first) }
    }

    static let pauseBacklog = 4096

    private func setInboundPaused(_ paused: Bool) {
        inbound.withLock { inbound in
            guard let source = inbound.source, inbound.paused != paused else { return }
            inbound.paused = paused
            if paused { source.suspend() } else { source.resume() }
        }
    }

    /// Called after the consumer took datagrams: a paused socket is read again once the backlog is small.
    private func consumed() {
        let small = state.withLock { $0.buffer.count < Self.pauseBacklog / 4 }
        if small { setInboundPaused(false) }
    }

    private func takeOne() -> [UInt8]? {
        state.withLock { $0.buffer.popFirst() }
    }

    public func receiveAvailable() async throws -> [[UInt8]] {
        startReading()
        let first = try await receive()
        let rest = state.withLock { s -> Deque<[UInt8]> in
            defer { s.buffer.removeAll(keepingCapacity: true) }
            return s.buffer
        }
        consumed()
        return [first] + rest
    }

    public func receive() async throws -> [UInt8] {
        startReading()
        let datagram = try await nextDatagram()
        consumed()
        return datagram
    }

    private func nextDatagram() async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { (cont: CheckedContinuation<[UInt8], any Error>) in
            let result = state.withLock { s -> Result<[UInt8], any Error>? in
                if let d = s.buffer.popFirst() { return .success(d) }
                if s.closed { return .failure(TransportError.closed) }
                s.receivers.append(cont)
                return nil
            }
            if let result { cont.resume(with: result) }
        }
    }

    // MARK: Outbound

    /// Takes ownership of `fd` (an acquired write/notify socket) as the outbound path.
    func attachOutbound(fd: Int32, mtu: Int) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        updateMTU(mtu)
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>]? in
            guard !s.closed else { return nil }
            if s.outFD >= 0 { Glibc.close(s.outFD) }
            s.outFD = fd
            defer { s.outboundWaiters.removeAll() }
            return s.outboundWaiters
        }
        guard let waiters else {
            Glibc.close(fd)
            return
        }
        for w in waiters { w.resume() }
    }

    /// Uses a D-Bus call (e.g. `WriteValue` type=command, or a `Value` PropertiesChanged) as the
    /// outbound path; nil removes it.
    func setSink(_ sink: Sink?) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.sink = sink
            guard sink != nil else { return [] }
            s.usedDBus = true
            defer { s.outboundWaiters.removeAll() }
            return s.outboundWaiters
        }
        for w in waiters { w.resume() }
    }

    public func send(_ datagram: [UInt8]) async throws {
        let limit = maxDatagramSize
        guard datagram.count <= limit else { throw TransportError.datagramTooLarge(size: datagram.count, limit: limit) }
        while true {
            enum Path { case fd(Int32), sink(Sink), wait, closed, handedOver }
            let path = state.withLock { s -> Path in
                if s.closed { return .closed }
                if s.handedOver { return .handedOver }
                if s.outFD >= 0 { return .fd(s.outFD) }
                if let sink = s.sink { return .sink(sink) }
                return .wait
            }
            switch path {
            case .closed:
                throw TransportError.closed
            case .handedOver:
                return  // the driver writes the socket now; a datagram from elsewhere would cut in
            case .wait:
                // The peripheral's datagrams are notifications: with nobody subscribed they go
                // nowhere, as over the air. Waiting instead would stall the session and its timers,
                // so a central that writes but never subscribes could hold the receiver forever (the
                // lab's hostile central did); the ARQ resends what matters once someone listens.
                if sendsNotifications { return }
                await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if s.closed || s.outFD >= 0 || s.sink != nil { return true }
                        s.outboundWaiters.append(cont)
                        return false
                    }
                    if ready { cont.resume() }
                }
            case .sink(let sink):
                do {
                    try await sink(datagram)
                    return
                } catch {
                    if isClosed { throw TransportError.closed }
                    throw error
                }
            case .fd(let fd):
                let n = datagram.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if n == datagram.count { return }
                if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS {
                    await waiter.wait(fd: fd, forWriting: true)  // back-pressure: wait for POLLOUT
                    continue
                }
                await close()
                throw TransportError.closed
            }
        }
    }

    // MARK: Handing the sockets over

    /// Hands over both acquired sockets once both are attached, if no D-Bus path is in use and
    /// nobody reads the link yet; `close()` then raises `wake`. On the central both are attached
    /// before the link is returned; on the peripheral the link exists from the peer's first call,
    /// so this waits up to `handOverPatience` for the other socket. Nil (drive the link through
    /// `send`/`receive`): the link closed, a D-Bus path is in use, the sockets were already
    /// handed over or are being read, or the second socket never came.
    public func takeSockets(wakingOnClose wake: WakeSignal?) async -> DatagramSockets? {
        let start = ContinuousClock.now
        let patience = sendsNotifications ? handOverPatience : .zero
        while true {
            enum Decision { case give(DatagramSockets), refuse, wait }
            let decision = state.withLock { s -> Decision in
                if s.closed || s.usedDBus || s.readingRequested || s.handedOver { return .refuse }
                guard s.inFD >= 0, s.outFD >= 0 else { return .wait }
                s.handedOver = true
                s.closeWake = wake
                return .give(DatagramSockets(inbound: s.inFD, outbound: s.outFD))
            }
            switch decision {
            case .give(let sockets): return sockets
            case .refuse: return nil
            case .wait:
                guard ContinuousClock.now - start < patience else { return nil }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Whether the sockets belong to a driver.
    var socketsHandedOver: Bool { state.withLock { $0.handedOver } }

    // MARK: Closing

    public func close() async {
        let taken = state.withLock { s -> State? in
            guard !s.closed else { return nil }
            s.closed = true
            let copy = s
            s.receivers.removeAll()
            s.outboundWaiters.removeAll()
            s.onClose.removeAll()
            s.sink = nil
            s.inFD = -1
            s.outFD = -1
            return copy
        }
        guard let taken else { return }
        taken.closeWake?.raise(.closed)
        waiter.cancelAll()
        inbound.withLock { inbound in
            if inbound.paused { inbound.source?.resume() }
            inbound.source?.cancel()
            inbound = InboundSource()
        }
        for r in taken.receivers { r.resume(throwing: TransportError.closed) }
        for w in taken.outboundWaiters { w.resume() }
        if taken.inFD >= 0 { Glibc.close(taken.inFD) }
        if taken.outFD >= 0 { Glibc.close(taken.outFD) }
        for action in taken.onClose { await action() }
    }
}
