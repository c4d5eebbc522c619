import Pipeline
import SocketIO
import Synchronization

/// One BLE link as a `DatagramTransport`. Each direction goes either through an acquired socket
/// (`GattSocketLink`) or through bluetoothd by D-Bus (`GattDBusLink`); both inbound paths fill one
/// queue (`GattInboundQueue`). On the central, `send` suspends until some outbound path is
/// attached; on the peripheral, a datagram sent before the peer subscribed to notifications is
/// dropped.
///
/// A driver may take both acquired sockets (`takeSockets`) and read and write them itself; the
/// link then reads neither (its read source starts only when someone first calls `receive`).
public final class GattLink: DatagramTransport {
    public typealias Sink = @Sendable ([UInt8]) async throws -> Void

    private struct State {
        var closed = false
        var mtu: Int
        /// Whether the peer's writes ever reached this link.
        var inboundSeen = false
        /// The receiver's session authenticated the peer on this link.
        var authenticated = false
        var outboundWaiters: [CheckedContinuation<Void, Never>] = []
        var onClose: [@Sendable () async -> Void] = []
    }
    private let state: Mutex<State>
    private let inbound = GattInboundQueue()
    private let sockets = GattSocketLink()
    private let dbus = GattDBusLink()

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
        let mtu = mtu
        return sendsNotifications ? attNotificationSize(mtu: mtu) : attPayloadSize(mtu: mtu)
    }
    /// The largest datagram the peer sends: writes if we notify, notifications if we write.
    public var peerMaxDatagramSize: Int {
        let mtu = mtu
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
    /// Whether the receiver authenticated this link's sender (`markAuthenticated`): another device's
    /// call then no longer ends the link (`TransferCharacteristicServer`).
    public var isAuthenticated: Bool { state.withLock { $0.authenticated } }

    /// The receiver's session authenticated this link's sender.
    public func markAuthenticated() { state.withLock { $0.authenticated = true } }

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

    /// Takes ownership of `fd` (an acquired socket) as the inbound path. Once someone reads
    /// (`receive`), the link reads it until the other end closes it (then the link closes); until
    /// then, or when the sockets were handed over (`takeSockets`), it is left alone. (A replaced
    /// socket handed over is closed: the driver sees that and ends.)
    func attachInbound(fd: Int32) {
        if sockets.attachInbound(fd: fd, handlers: readHandlers) {
            state.withLock { $0.inboundSeen = true }
        }
    }

    /// Queues one inbound datagram that came by D-Bus. Once the sockets belong to a driver, nobody
    /// reads the queue: the datagram is dropped (the peer's ARQ resends it the way it came before).
    func deliver(_ datagram: [UInt8]) {
        state.withLock { $0.inboundSeen = true }
        dbus.noteInbound()
        if !sockets.handedOver { queue([datagram]) }
    }

    private var readHandlers: GattSocketLink.ReadHandlers {
        GattSocketLink.ReadHandlers(
            deliver: { [weak self] datagrams in self?.queue(datagrams) },
            ended: { [weak self] in
                guard let self else { return }
                Task { await self.close() }
            })
    }

    /// Queues inbound datagrams. Far behind, the socket is left unread (bluetoothd then buffers)
    /// until the consumer catches up.
    private func queue(_ datagrams: [[UInt8]]) {
        if inbound.append(datagrams) > Self.pauseBacklog { sockets.setPaused(true) }
    }

    static let pauseBacklog = 4096

    /// After the consumer took datagrams: a paused socket is read again once the backlog is small.
    private func consumed() {
        if inbound.count < Self.pauseBacklog / 4 { sockets.setPaused(false) }
    }

    public func receiveAvailable() async throws -> [[UInt8]] {
        sockets.startReading(readHandlers)
        let first = try await inbound.next()
        let rest = inbound.takeAll()
        consumed()
        return [first] + rest
    }

    public func receive() async throws -> [UInt8] {
        sockets.startReading(readHandlers)
        let datagram = try await inbound.next()
        consumed()
        return datagram
    }

    // MARK: Outbound

    /// Takes ownership of `fd` (an acquired write/notify socket) as the outbound path.
    func attachOutbound(fd: Int32, mtu: Int) {
        updateMTU(mtu)
        if sockets.attachOutbound(fd: fd) { wakeSenders() }
    }

    /// Uses a D-Bus call (e.g. `WriteValue` type=command, or a `Value` PropertiesChanged) as the
    /// outbound path; nil removes it.
    func setSink(_ sink: Sink?) {
        dbus.setSink(sink)
        if sink != nil { wakeSenders() }
    }

    private func wakeSenders() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            defer { s.outboundWaiters.removeAll() }
            return s.outboundWaiters
        }
        for w in waiters { w.resume() }
    }

    public func send(_ datagram: [UInt8]) async throws {
        let limit = maxDatagramSize
        guard datagram.count <= limit else { throw TransportError.datagramTooLarge(size: datagram.count, limit: limit) }
        while true {
            if isClosed { throw TransportError.closed }
            switch sockets.outbound {
            case .handedOver:
                return  // the driver writes the socket now; a datagram from elsewhere would cut in
            case .socket(let fd):
                switch await sockets.write(datagram, to: fd) {
                case .sent: return
                case .tryAgain: continue
                case .failed:
                    await close()
                    throw TransportError.closed
                }
            case .none:
                break
            }
            if let sink = dbus.sink {
                do {
                    try await sink(datagram)
                    return
                } catch {
                    if isClosed { throw TransportError.closed }
                    throw error
                }
            }
            // The peripheral's datagrams are notifications: with nobody subscribed they go
            // nowhere, as over the air. Waiting instead would stall the session and its timers,
            // so a central that writes but never subscribes could hold the receiver forever (the
            // lab's hostile central did); the ARQ resends what matters once someone listens.
            if sendsNotifications { return }
            await waitForOutboundPath()
        }
    }

    private func waitForOutboundPath() async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.closed { return true }
                if case .none = sockets.outbound, dbus.sink == nil {
                    s.outboundWaiters.append(cont)
                    return false
                }
                return true
            }
            if ready { cont.resume() }
        }
    }

    // MARK: Handing the sockets over

    /// Hands over both acquired sockets once both are attached, if no D-Bus path is in use and
    /// nobody reads the link yet; `close()` then raises `wake`. On the central both are attached
    /// before the link is returned; on the peripheral the link exists from the peer's first call,
    /// so this waits up to `handOverPatience` for the other socket. Nil (drive the link through
    /// `send`/`receive`): the link closed, a D-Bus path is in use, the sockets were already
    /// handed over or are being read, or the second socket never came. (The link's own `closed` is
    /// not asked here: the socket half closes with the link and raises `wake` then. Locks are taken
    /// in one order only: the link's, the socket half's, the D-Bus half's.)
    public func takeSockets(wakingOnClose wake: (any CloseAlarm)?) async -> DatagramSockets? {
        let start = ContinuousClock.now
        let patience = sendsNotifications ? handOverPatience : .zero
        while true {
            switch sockets.handOver(wakingOnClose: wake, unless: { dbus.used }) {
            case .give(let given): return given
            case .refuse: return nil
            case .wait:
                guard ContinuousClock.now - start < patience else { return nil }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Whether the sockets belong to a driver.
    var socketsHandedOver: Bool { sockets.handedOver }

    // MARK: Closing

    public func close() async {
        let taken = state.withLock { s -> State? in
            guard !s.closed else { return nil }
            s.closed = true
            defer {
                s.outboundWaiters.removeAll()
                s.onClose.removeAll()
            }
            return s
        }
        guard let taken else { return }
        sockets.close()
        dbus.close()
        inbound.close()
        for w in taken.outboundWaiters { w.resume() }
        for action in taken.onClose { await action() }
    }
}
