import Framing
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The receiving endpoint, sans-IO: the receiver's stack composed,
///
///     ReceivingTransferLayer  (transfer messages; files through a `FileStore`)
///     ResponderChannel        (Noise IK, then records)
///     LinkLayer               (framing and ARQ; datagrams)
///
/// serving one connection at a time. What outlives a connection (the trust store, the handshake
/// replay guard, partial transfers for resume, open folders, completed transfers) is its shared
/// state, which carries over from one connection to the next.
///
/// A receiver that serves several connections at once makes one session per connection with
/// `sharingState()`: those sessions use one shared state at the same time. A sender approved or
/// trusted on one is trusted on the next handshake of any; a message 1 accepted on one is a replay
/// on all; a partial file a live connection is receiving is never expired, evicted or abandoned by
/// another. The shared state is confined to one thread (the pump's): drive every session that
/// shares it from that thread. A copy of a session shares it too, and also counts as the same
/// connection: make another connection's session with `sharingState()`, not by copying.
public struct ReceiverSession {
    public enum Event: Equatable, Sendable {
        /// A trusted sender completed the handshake.
        case authenticated(sender: String, fingerprint: String)
        /// First contact (`asksAboutStrangers`): an unknown sender completed the handshake; ask
        /// the user, then call `approve(name:now:)` or `decline(now:)` (by itself, the session
        /// declines after `SessionConfiguration.approvalTimeout`).
        case approvalNeeded(ApprovalRequest)
        /// A connection was refused during the handshake (for the local log; the peer learns nothing).
        case refused(SessionError.RefusalReason)
        case transfer(TransferReceiver.Event)
    }

    typealias Stack = LayerStack<LayerStack<ReceivingTransferLayer, ResponderChannel>, LinkLayer>

    private let identity: Identity
    /// What outlives a connection, shared with the sessions made by `sharingState()`.
    private let shared: ReceiverSharedState
    private let configuration: SessionConfiguration
    private let decompresses: Bool
    /// The current connection's layers (nil between connections).
    private var stack: Stack?
    /// Between connections: this session's transfer receiver (its connection state is reset at
    /// each `begin`; what outlives connections is in the shared ledger).
    private var parked: TransferReceiver?
    private var events: [Event] = []

    /// Extensions granted to a sender that asks (docs/protocol.md §8): `pipelining` always,
    /// `compression` with `decompresses`, `folders` where `store` also stores folders (`TreeStore`),
    /// `firstContact` with `asksAboutStrangers` (an unknown sender that asks for it waits for the
    /// user's answer, `approvalNeeded`, instead of being refused: docs/protocol.md §8.5),
    /// `notTrusted` with `provesKeyToStrangers` (an unknown sender that asks for it is told so in
    /// message 2, which proves this receiver's key, instead of the one-byte refusal: §8.7).
    /// `replayMemory` keeps the replay guard across restarts: what it recalls is known replayed
    /// from the start, and every timestamp accepted is remembered there before message 2 is
    /// written (nil: in memory only, forgotten at exit). `completedMemory` keeps the transfers
    /// completed across restarts, so that a file stored just before one is not stored twice.
    public init(identity: Identity, trust: TrustStore, store: any FileStore,
                configuration: SessionConfiguration = .init(), maxFileSize: UInt64 = 1 << 40, decompresses: Bool = true,
                asksAboutStrangers: Bool = false, provesKeyToStrangers: Bool = false, replayMemory: (any ReplayMemory)? = nil,
                completedMemory: (any CompletedMemory)? = nil) {
        let ledger = ReceiverLedger(store: store, makeHasher: { FileHasher() }, maxFileSize: maxFileSize,
                                    partialLifetime: configuration.partialLifetime, trees: store as? any TreeStore,
                                    completedMemory: completedMemory)
        self.init(identity: identity, shared: ReceiverSharedState(trust: trust, ledger: ledger, replayMemory: replayMemory),
                  configuration: configuration,
                  decompresses: decompresses, asksAboutStrangers: asksAboutStrangers, provesKeyToStrangers: provesKeyToStrangers)
    }

    private init(identity: Identity, shared: ReceiverSharedState, configuration: SessionConfiguration, decompresses: Bool,
                 asksAboutStrangers: Bool, provesKeyToStrangers: Bool) {
        self.identity = identity
        self.shared = shared
        self.configuration = configuration
        self.decompresses = decompresses
        // Each connection's receiver has its own decompressor: it keeps that connection's chunk history.
        let transfer = TransferReceiver(ledger: shared.ledger, decompressor: decompresses ? ZstdChunkDecompressor() : nil,
                                        firstContact: asksAboutStrangers, notTrusted: provesKeyToStrangers)
        self.extensions = transfer.grantable
        self.parked = transfer
    }

    /// A new session, not connected, for another connection served at the same time as this
    /// one's: same identity, configuration and extensions, and the same shared state (trust,
    /// replay guard, partial transfers, folders, completed transfers). A server makes one per
    /// connection and drives them all from one thread.
    public func sharingState() -> ReceiverSession {
        ReceiverSession(identity: identity, shared: shared, configuration: configuration, decompresses: decompresses,
                        asksAboutStrangers: extensions.contains(.firstContact), provesKeyToStrangers: extensions.contains(.notTrusted))
    }

    /// Whether `other` uses the same shared state as this session (it was made by `sharingState()`
    /// from this one, or this one from it, or both from a third).
    public func sharesState(with other: ReceiverSession) -> Bool { shared === other.shared }

    /// The extensions this receiver grants: what to publish in its extensions characteristic.
    public let extensions: TransferExtensions

    public mutating func takeEvents() -> [Event] {
        if stack != nil {
            events += stack?.withLayer(ResponderChannel.self) { $0.takeEvents() } ?? []
            events += stack?.withLayer(ReceivingTransferLayer.self) { $0.transfer.takeEvents() }?.map(Event.transfer) ?? []
        } else {
            events += parked?.takeEvents().map(Event.transfer) ?? []
        }
        defer { events.removeAll() }
        return events
    }

    private var transfer: TransferReceiver? { stack?.layer(ReceivingTransferLayer.self)?.transfer ?? parked }
    private var channel: ResponderChannel? { stack?.layer(ResponderChannel.self) }
    private var link: ReliableLink? { stack?.layer(LinkLayer.self)?.link }

    public var isConnected: Bool { stack != nil }
    /// The sender of the current connection has said goodbye (its files are settled).
    public var senderSaidGoodbye: Bool { transfer?.sessionEnded ?? false }
    public var linkStatistics: LinkStatistics? { link?.statistics }
    /// Bytes from the peer the current link holds (see `ReliableLink.bufferedInboundBytes`).
    public var linkBufferedInboundBytes: Int? { link?.bufferedInboundBytes }
    /// Partial transfers kept in the shared state: waiting for their senders, or being received
    /// by this or any other connection sharing it.
    public var partialTransfers: Int { shared.ledger.partialCount }

    /// Whether the current connection is finished (goodbye exchanged and delivered, or a refusal
    /// sent): the driver should disconnect.
    public var connectionComplete: Bool {
        guard let link, link.isIdle, let channel else { return false }
        if channel.isEstablished { return transfer?.sessionEnded ?? false }
        return channel.isRefusing
    }

    /// A sender connected. `wallClock` is nanoseconds since the Unix epoch, now (message 1's
    /// timestamp may be at most `maxTimestampAhead` past it); `ephemeral` is for tests only.
    /// With `busy`, the connection is served only to tell its sender that every slot is taken
    /// (docs/protocol.md §8.6): message 1 is judged as usual, and a sender that asks for `busy` is
    /// answered `busy`, never served; the connection then ends as after a refusal.
    public mutating func accept(maxDatagramSize: Int, peerMaxDatagramSize: Int? = nil, now: Instant, wallClock: UInt64,
                                ephemeral: SecureBytes? = nil, busy: BusyAnswer? = nil) throws(SessionError) {
        if isConnected { linkLost(now: now) }
        guard let transfer = parked.take() else { return }
        let channel: ResponderChannel
        do {
            channel = try ResponderChannel(identity: identity, shared: shared, wallClock: wallClock, ephemeral: ephemeral, now: now,
                                           configuration: configuration, grants: extensions)
        } catch {
            parked = transfer
            throw error
        }
        let link = LinkLayer(configuration: configuration, maxDatagramSize: maxDatagramSize,
                             peerMaxDatagramSize: peerMaxDatagramSize, fillsWindow: false, framesCountBeforeLive: false, now: now)
        stack = ReceivingTransferLayer(transfer: transfer, busy: busy).stacked(on: channel).stacked(on: link)
    }

    /// The connection ended (for whatever reason). Partial files wait for the sender to resume;
    /// those whose senders have been away longer than their lifetime are removed, but never one
    /// that another connection sharing this state is receiving.
    public mutating func linkLost(now: Instant) {
        guard var stack = stack.take() else { return }
        events += stack.withLayer(ResponderChannel.self) { $0.takeEvents() } ?? []
        stack.withLayer(ReceivingTransferLayer.self) { layer in
            layer.transfer.connectionLost(now: now)
            layer.transfer.expirePartials(now: now)
        }
        _ = stack.drainSignals()
        parked = stack.layer(ReceivingTransferLayer.self)?.transfer
    }

    /// Shutting down: partial files are checkpointed and closed (kept for the next run where the
    /// store keeps them, else removed) and open folders removed, those of every session sharing
    /// this one's state too (the receiver is stopping: call it on any one of them, after or
    /// instead of their `linkLost`; what a still-connected one then receives of them is ignored).
    public mutating func shutdown() {
        linkLost(now: .zero)
        shared.ledger.closeAll()
    }

    /// Takes up the partial files an earlier run left (`FileStore.recoverPartials`), each waiting
    /// for its sender's resume from what is left of its lifetime, for every session sharing this
    /// one's state; returns how many, and what the stores removed. Call it once, before the first
    /// connection.
    public func recoverPartials(now: Instant) -> KeptAtStart {
        shared.ledger.recoverPartials(now: now)
    }

    public mutating func setMaxDatagramSize(_ size: Int, peer: Int? = nil) {
        withStack { stack in stack.handle(.datagramSizeChanged(own: size, peer: peer)) }
    }

    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        try withStack { stack throws(SessionError) in
            do throws(SessionError) {
                try stack.receive(datagram, now: now)
            } catch {
                // A record that fails authentication, or an authenticated sender breaking the
                // transfer rules: the file in progress is not resumable, its partial goes now.
                if let failure = Self.fileFailure(for: error) { stack.handle(.abandonFile(failure)) }
                throw error
            }
        }
    }

    public var nextDeadline: Instant? { stack?.nextDeadline }

    public mutating func handleTimers(now: Instant) throws(SessionError) {
        try withStack { stack throws(SessionError) in
            try stack.handleTimers(now: now)
            // A user who did not answer in time: the channel's `reject` goes to the link now.
            try stack.passDown(now: now)
        }
    }

    /// Runs `body` on the current connection's stack, moved out (not copied) so that its buffers
    /// stay uniquely referenced. The layers handle each other's signals inside the stack; the
    /// session has nothing to add, so what reaches the top is dropped.
    private mutating func withStack<Result, E: Error>(_ body: (inout Stack) throws(E) -> Result) throws(E) -> Result? {
        guard var stack = stack.take() else { return nil }
        defer {
            _ = stack.drainSignals()
            self.stack = stack
        }
        return try body(&stack)
    }

    /// Trusts `peer` from the next handshake on, on this and every session sharing its state: a
    /// key the driver added to the trust directory when no connection could take the answer any
    /// more (the link went while the user typed).
    public mutating func trust(_ peer: TrustStore.Peer) {
        shared.trust(peer)
    }

    /// The trust directory was read again (`TrustDirectory`): the next handshake on every
    /// connection sharing this state is judged against `store`. A connection whose sender has
    /// authenticated already goes on; one whose key was removed is refused at its next handshake.
    public mutating func replaceTrust(_ store: TrustStore) {
        shared.replaceTrust(store)
    }

    // MARK: - Storage off the pump

    /// Whether commits, checkpoints and folders come out as `StorageWork` (`takeStorageWork`)
    /// for the driver to run off its thread, one connection's in order, and answer with
    /// `storageDone`; false (the default): they run inside `receive`. Set it before `accept`, on a session of its own
    /// (`sharingState()`); the storage must then take calls from the worker and the pump at once.
    public var defersStorage: Bool {
        get { transfer?.defersStorage ?? false }
        set {
            if stack != nil {
                withStack { stack in stack.withLayer(ReceivingTransferLayer.self) { $0.transfer.defersStorage = newValue } }
            } else {
                parked?.defersStorage = newValue
            }
        }
    }

    /// Storage work made since the last call, to run in order off the pump's thread.
    public mutating func takeStorageWork() -> [StorageWork] {
        if stack != nil {
            return withStack { stack in stack.withLayer(ReceivingTransferLayer.self) { $0.transfer.takeStorageWork() } ?? [] } ?? []
        }
        return parked?.takeStorageWork() ?? []
    }

    /// Whether storage work is out and its outcome not yet in.
    public var isAwaitingStorage: Bool { transfer?.isAwaitingStorage ?? false }

    /// A storage work's outcome: its answer (a commit's `confirm` is sent only now:
    /// acknowledgements may run ahead of durability, `confirm` never does), then the answers to
    /// what waited for it. After the connection ended, the shared state still learns of it.
    public mutating func storageDone(_ outcome: StorageOutcome, now: Instant) throws(SessionError) {
        guard stack != nil else {
            _ = try? parked?.storageDone(outcome, now: now)
            return
        }
        try withStack { stack throws(SessionError) in
            do throws(SessionError) {
                try stack.withLayer(ReceivingTransferLayer.self) { layer throws(SessionError) in try layer.storageDone(outcome, now: now) }
                try stack.passDown(now: now)
            } catch {
                if let failure = Self.fileFailure(for: error) { stack.handle(.abandonFile(failure)) }
                throw error
            }
        }
    }

    /// Whether the user is being asked about the sender of the current connection.
    public var isAwaitingApproval: Bool { channel?.isAwaitingApproval ?? false }

    /// First contact: the user accepted the unknown sender of the current connection under
    /// `name` (the driver has written its key to the trust directory). It is trusted from now on,
    /// here and on later handshakes of every session sharing this one's state, and its offer is
    /// answered. Returns false if nobody waits.
    @discardableResult
    public mutating func approve(name: String, now: Instant) throws(SessionError) -> Bool {
        guard isAwaitingApproval else { return false }
        let peer = try withStack { stack throws(SessionError) -> TrustStore.Peer? in
            guard let peer = stack.withLayer(ResponderChannel.self, { $0.approve(name: name) }) ?? nil else { return nil }
            // The opening goes up to be answered, and the answer down to the link.
            try stack.handleTimers(now: now)
            try stack.passDown(now: now)
            return peer
        } ?? nil
        // The channel's judge has trusted it in the shared state already.
        return peer != nil
    }

    /// First contact: the user said no (or the driver's prompt gave up). The sender's offer is
    /// rejected (`notApproved`) and the connection ends; nothing is trusted.
    public mutating func decline(now: Instant) throws(SessionError) {
        try withStack { stack throws(SessionError) in
            try stack.withLayer(ResponderChannel.self) { channel throws(SessionError) in try channel.decline(timedOut: false, now: now) }
            try stack.passDown(now: now)
        }
    }

    /// The next datagram to transmit now, if any. (The receiver's answers are in the link as soon
    /// as they exist: `receive` passes them down.)
    public mutating func nextDatagram(now: Instant) -> [UInt8]? {
        withStack { stack in stack.withLayer(LinkLayer.self) { $0.nextDown(now: now) } ?? nil } ?? nil
    }

    /// What the file in progress died of, when a connection ends on `error`; nil when the file
    /// may still resume (the link, not the sender, failed).
    static func fileFailure(for error: SessionError) -> FileFailure? {
        switch error {
        case .record: .tampered
        case .transfer(let cause): .senderBrokeProtocol(cause)
        default: nil
        }
    }
}
