import Framing
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// The sending endpoint, sans-IO: the sender's stack composed,
///
///     SendingTransferLayer  (transfer messages)
///     InitiatorChannel      (Noise IK, then records)
///     LinkLayer             (framing and ARQ; datagrams)
///
/// one stack per connection; the transfer layer's state carries over from one to the next.
///
/// Drive it with `connect` when a link comes up, `receive` for each datagram, `nextDatagram` to
/// get what to transmit, and `handleTimers` at `nextDeadline`. When a link drops, call
/// `linkLost` and then `connect` again on the next link: the transfer resumes where the receiver
/// says its data stopped, under a fresh handshake.
public struct SenderSession {
    public enum Event: Equatable, Sendable {
        /// The receiver proved it holds the pinned key; data flows from now on.
        case authenticated(fingerprint: String)
        /// First contact: the receiver does not know us and asks its user, who must type this
        /// `code` (`PairingCode`, "ddd ddd") on the receiver, which checks it against its own. Nothing is sent until
        /// the answer: `fileStarted` (accepted), or the session fails with `notApprovedByPeer`.
        case awaitingApproval(code: String)
        case transfer(TransferSender.Event)
    }

    typealias Stack = LayerStack<LayerStack<SendingTransferLayer, InitiatorChannel>, LinkLayer>

    private let identity: Identity
    private let receiverKey: PublicKey
    private let configuration: SessionConfiguration
    /// The current connection's layers (nil between connections).
    private var stack: Stack?
    /// Between connections: the transfer's state, all that is kept.
    private var parked: TransferSender?
    private var events: [Event] = []

    /// Extensions (docs/protocol.md §8), asked for only where the receiver offers them:
    /// `compresses`, send file chunks zstd-compressed where that pays; `pipelines`, send the next
    /// offer and a new file's data without waiting for the receiver's answers.
    /// Sends `items` (files, and folders as `OutgoingItem`s: extension `folders`).
    public init(identity: Identity, receiverKey: PublicKey, items: [OutgoingItem],
                configuration: SessionConfiguration = .init(), compresses: Bool = false, pipelines: Bool = true,
                makeTransferID: @escaping () -> TransferID = randomTransferID) {
        self.identity = identity
        self.receiverKey = receiverKey
        self.configuration = configuration
        self.parked = TransferSender(items: items, makeHasher: { FileHasher() }, makeID: makeTransferID,
                                     compressor: compresses ? ZstdChunkCompressor() : nil, pipelines: pipelines)
    }

    /// Sends `files`, each under its base name.
    public init(identity: Identity, receiverKey: PublicKey, files: [any FileSource],
                configuration: SessionConfiguration = .init(), compresses: Bool = false, pipelines: Bool = true,
                makeTransferID: @escaping () -> TransferID = randomTransferID) {
        self.init(identity: identity, receiverKey: receiverKey, items: files.map(OutgoingItem.file), configuration: configuration,
                  compresses: compresses, pipelines: pipelines, makeTransferID: makeTransferID)
    }

    /// File bytes handed to the link, and the `data`/`zdata` payload bytes that carried them.
    public var fileBytesSent: UInt64 { transfer?.fileBytesSent ?? 0 }
    public var payloadBytesSent: UInt64 { transfer?.payloadBytesSent ?? 0 }
    /// The extensions the receiver granted on the current connection.
    public var extensions: TransferExtensions { transfer?.extensions ?? [] }

    private var transfer: TransferSender? { stack?.layer(SendingTransferLayer.self)?.transfer ?? parked }
    private var link: ReliableLink? { stack?.layer(LinkLayer.self)?.link }

    public var isFinished: Bool { transfer?.isFinished ?? false }
    public var isConnected: Bool { stack != nil }
    /// The handshake is complete on the current link: what is sent now is file data.
    public var isEstablished: Bool { stack?.layer(InitiatorChannel.self)?.isEstablished ?? false }

    /// Nothing left to send or acknowledge on the current link.
    public var isLinkIdle: Bool { link?.isIdle ?? true }
    public var linkStatistics: LinkStatistics? { link?.statistics }
    /// The link's smoothed round-trip time and current retransmission timeout.
    public var linkTiming: (smoothedRTT: Duration?, rto: Duration)? {
        guard let link else { return nil }
        return (link.smoothedRoundTripTime, link.retransmissionTimeout)
    }

    public mutating func takeEvents() -> [Event] {
        if stack != nil {
            events += stack?.withLayer(SendingTransferLayer.self) { $0.transfer.takeEvents() }?.map(Event.transfer) ?? []
        } else {
            events += parked?.takeEvents().map(Event.transfer) ?? []
        }
        defer { events.removeAll() }
        return events
    }

    /// A new link is up: start the handshake. `wallClock` is nanoseconds since the Unix epoch
    /// (replay protection); `receiverExtensions` what the receiver's extensions characteristic
    /// lists (none if it has none); `ephemeral` is for tests only.
    public mutating func connect(maxDatagramSize: Int, peerMaxDatagramSize: Int? = nil, now: Instant, wallClock: UInt64,
                                 receiverExtensions: TransferExtensions = [], ephemeral: SecureBytes? = nil) throws(SessionError) {
        if isConnected { linkLost() }
        guard var transfer = parked.take() else { return }
        transfer.dataPerRecord = RecordSizing.dataPerRecord(datagramSize: maxDatagramSize)
        let opening = transfer.openingMessages(receiverOffers: receiverExtensions)
        // Nothing this receiver can take is left (folders, and it takes none): no handshake.
        guard !opening.isEmpty else {
            parked = transfer
            return
        }
        let channel: InitiatorChannel
        do {
            channel = try InitiatorChannel(identity: identity, receiverKey: receiverKey, opening: opening, wallClock: wallClock,
                                           ephemeral: ephemeral, now: now, configuration: configuration)
        } catch {
            parked = transfer
            throw error
        }
        let link = LinkLayer(configuration: configuration, maxDatagramSize: maxDatagramSize,
                             peerMaxDatagramSize: peerMaxDatagramSize, fillsWindow: true, now: now)
        let approvalLimit = configuration.approvalTimeout + SessionConfiguration.approvalMargin
        var stack = SendingTransferLayer(transfer: transfer, approvalLimit: approvalLimit).stacked(on: channel).stacked(on: link)
        // Message 1 goes to the link at once.
        try? stack.passDown(now: now)
        self.stack = stack
    }

    /// The link went away. Transfer state is kept for the next `connect`.
    public mutating func linkLost() {
        guard var stack = stack.take() else { return }
        stack.withLayer(SendingTransferLayer.self) { $0.transfer.connectionLost() }
        parked = stack.layer(SendingTransferLayer.self)?.transfer
    }

    /// The MTU changed (e.g. a socket was re-acquired).
    public mutating func setMaxDatagramSize(_ size: Int, peer: Int? = nil) {
        withStack { stack in stack.handle(.datagramSizeChanged(own: size, peer: peer)) }
    }

    public mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
        try withStack { stack throws(SessionError) in try stack.receive(datagram, now: now) }
    }

    /// Runs `body` on the current connection's stack, moved out (not copied) so that its buffers
    /// stay uniquely referenced; then hears its signals, even after a throw (the receiver's
    /// authentication is reported even if what message 2 carried then broke the rules).
    private mutating func withStack<Result, E: Error>(_ body: (inout Stack) throws(E) -> Result) throws(E) -> Result? {
        guard var stack = stack.take() else { return nil }
        defer {
            noteSignals(&stack)
            self.stack = stack
        }
        return try body(&stack)
    }

    /// What the layers told each other that the user hears of: the receiver authenticated, and
    /// (first contact) its user is deciding about us, with the code to type there.
    private mutating func noteSignals(_ stack: inout Stack) {
        while let signal = stack.nextSignal() {
            switch signal {
            case .peerAuthenticated:
                events.append(.authenticated(fingerprint: receiverKey.fingerprint))
            case .approvalPending(until: .some):
                let hash = stack.layer(InitiatorChannel.self)?.handshakeHash ?? []
                events.append(.awaitingApproval(code: PairingCode.from(handshakeHash: hash)))
            case .approvalPending(until: nil), .datagramSizeChanged, .abandonFile, .peerProvedLive:
                break
            }
        }
    }

    public var nextDeadline: Instant? { stack?.nextDeadline }

    public mutating func handleTimers(now: Instant) throws(SessionError) {
        try withStack { stack throws(SessionError) in try stack.handleTimers(now: now) }
    }

    /// The next datagram to transmit now, if any. Pulls file data into the link while the link
    /// has room (so memory stays bounded by the window, whatever the file size).
    public mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? {
        try withStack { stack throws(SessionError) in try stack.nextDown(now: now) } ?? nil
    }
}
