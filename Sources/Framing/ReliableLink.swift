import DequeModule
import Pipeline

/// Selective-repeat ARQ over one connection (docs/protocol.md §2): reliable, in-order,
/// exactly-once delivery of messages of 1...65535 bytes over a datagram link that may drop,
/// duplicate, reorder or corrupt.
///
/// Sans-IO: the caller moves datagrams and hands in the time. A driver loop:
/// 1. after `send(message:)`, `receive(datagram:now:)` or `handleTimers(now:)`, call
///    `nextDatagram(now:)` until it returns nil and transmit each datagram;
/// 2. take messages with `nextMessage()`;
/// 3. wait for the next datagram from the peer or until `nextDeadline`, whichever comes first,
///    then call `handleTimers(now:)` when the deadline has passed.
///
/// Memory: at most `window` frames are retained each way (sent-but-unacknowledged and
/// received-out-of-order), plus one message being reassembled (at most `maxMessageLength`),
/// plus what the caller queued with `send` and has not taken with `nextMessage`.
///
/// The parts, each with its own tests: `SendWindow` (frames in flight, retransmission, link-dead),
/// `ReceiveWindow` (reorder buffer, reassembly, selective-ack bitmap), `RTTEstimator` (RFC 6298)
/// and `AckScheduler` (when acks go out). This type queues and fragments messages, encodes and
/// decodes frames, counts, and wires the parts together.
///
/// `maxDatagramSize` below 8 is raised to 8 (an ack frame must fit). A change applies to frames
/// built afterwards; frames already sent keep their size when retransmitted (their sequence
/// numbers are fixed), so a link whose MTU shrinks mid-connection must be reconnected.
public struct ReliableLink {
    public let configuration: LinkConfiguration

    public var maxDatagramSize: Int {
        didSet { maxDatagramSize = max(maxDatagramSize, FrameLayout.minimumDatagramSize) }
    }

    /// The largest datagram the peer sends us, when the transport knows it differs from ours (GATT
    /// notifications carry 2 bytes less than writes). Its acks ride in those datagrams, so their
    /// bitmaps, and with them our window, are bounded by it. Nil: the same as `maxDatagramSize`.
    public var peerMaxDatagramSize: Int?

    public private(set) var statistics = LinkStatistics()

    /// Messages queued by `send`, the first one partly sent from `pendingOffset` on.
    private var pending = Deque<[UInt8]>()
    private var pendingOffset = 0
    public private(set) var bufferedOutboundBytes = 0

    /// Frames in flight and their retransmission.
    private var outbound: SendWindow
    /// The RTO the send window's timers use.
    private var rtt: RTTEstimator
    /// Frames from the peer, reordered and reassembled into messages.
    private var inbound: ReceiveWindow
    /// When our ack frames go out.
    private var acks: AckScheduler

    private var failure: LinkError?

    /// When the peer last moved this link forward (nil: not yet): a data frame of its was taken
    /// into the receive window for the first time, or an ack of its acknowledged a frame of ours
    /// for the first time. A datagram that fails framing (CRC, malformed), a duplicate, a frame
    /// outside the window, and an ack that acknowledges nothing new leave it as it was: they show
    /// that someone transmits, not that the peer gets anywhere. A session's idle timeout counts
    /// from here (docs/protocol.md §6).
    public private(set) var lastPeerProgress: Instant?

    // MARK: API

    public init(configuration: LinkConfiguration = .init(), maxDatagramSize: Int) {
        let configuration = configuration.clamped
        self.configuration = configuration
        self.maxDatagramSize = max(maxDatagramSize, FrameLayout.minimumDatagramSize)
        self.outbound = SendWindow(capacity: configuration.window, linkDeadAfter: configuration.linkDeadAfter)
        self.rtt = RTTEstimator(initial: configuration.initialRTO, minimum: configuration.minRTO,
                                maximum: configuration.maxRTO)
        self.inbound = ReceiveWindow(capacity: configuration.window, maxMessageLength: configuration.maxMessageLength)
        self.acks = AckScheduler(ackEvery: configuration.ackEvery, ackDelay: configuration.ackDelay)
    }

    /// The longest message accepted from the peer: `configuration.maxMessageLength` unless lowered,
    /// e.g. by a session before the peer has authenticated (a start frame announcing more ends the
    /// connection). Clamped to 1...`configuration.maxMessageLength`.
    public var maxIncomingMessageLength: Int {
        get { inbound.maxMessageLength }
        set { inbound.maxMessageLength = min(newValue, configuration.maxMessageLength) }
    }

    /// Data frames accepted from the next expected one on (so at most `receiveWindow - 1` held out
    /// of order): `configuration.window` unless lowered, e.g. by a session before the peer has
    /// authenticated. Frames beyond it are dropped as out of window and retransmitted by the peer.
    /// Clamped to 1...`configuration.window`.
    public var receiveWindow: Int {
        get { inbound.limit }
        set { inbound.limit = newValue }
    }

    /// Bytes from the peer held here and not yet taken with `nextMessage`: fragments buffered out
    /// of order, the message being reassembled (its announced length, which is reserved at its
    /// start), and delivered messages. Each buffered fragment is a slice of its datagram, so what
    /// stays in memory for it is the datagram (at most `maxDatagramSize` bytes).
    public var bufferedInboundBytes: Int { inbound.bufferedBytes }

    /// Queues one message (1...maxMessageLength bytes).
    public mutating func send(message: [UInt8]) throws(LinkError) {
        if let failure { throw failure }
        guard !message.isEmpty else { throw .emptyMessage }
        guard message.count <= configuration.maxMessageLength else { throw .messageTooLarge }
        pending.append(message)
        bufferedOutboundBytes += message.count
    }

    /// Nothing queued, nothing unacknowledged, no ack owed.
    public var isIdle: Bool {
        pending.isEmpty && outbound.inFlight == 0 && !acks.isOwed
    }

    /// The current retransmission timeout.
    public var retransmissionTimeout: Duration { rtt.timeout }

    /// The smoothed round-trip time, once measured.
    public var smoothedRoundTripTime: Duration? { rtt.smoothed }

    /// Earliest time `handleTimers` has work: ack delay, retransmission timeout, link-dead check.
    /// (Work that is due already, such as an immediate ack, is returned by `nextDatagram`.)
    public var nextDeadline: Instant? {
        guard failure == nil else { return nil }
        switch (acks.deadline, outbound.nextDeadline) {
        case let (ack?, send?): return min(ack, send)
        case let (ack, send): return ack ?? send
        }
    }

    /// Runs the timers: turns a due delayed ack into an immediate one, queues retransmissions
    /// whose timeout expired. Throws `.linkDead` when the oldest frame made no progress for
    /// `linkDeadAfter`.
    public mutating func handleTimers(now: Instant) throws(LinkError) {
        if let failure { throw failure }
        acks.handleTimer(now: now)
        if outbound.isDead(now: now) {
            failure = .linkDead
            throw .linkDead
        }
        expireRetransmitTimers(now: now)
    }

    /// The next datagram to transmit now: an owed ack first, then retransmissions, then new
    /// frames within the window. Nil: nothing to send now.
    public mutating func nextDatagram(now: Instant) -> [UInt8]? {
        guard failure == nil else { return nil }
        if acks.isDue(now: now) {
            let bitmap = inbound.selectiveAckBitmap(maxBytes: maxDatagramSize - FrameLayout.ackFrameBaseSize)
            let datagram = FrameCodec.encodeAck(cumulative: inbound.next, selectiveAcks: bitmap)
            acks.ackSent()
            statistics.acksSent += 1
            return count(datagram)
        }
        expireRetransmitTimers(now: now)
        if outbound.hasQueuedRetransmissions,
           let datagram = outbound.nextRetransmission(now: now, rto: rtt.rto) {
            statistics.retransmissions += 1
            return count(datagram)
        }
        if outbound.inFlight < effectiveWindow, let message = pending.first {
            return count(nextNewFrame(of: message, now: now))
        }
        return nil
    }

    /// Takes one datagram from the peer. Corrupt, duplicate and out-of-window frames are counted
    /// and dropped. Throws only when the peer broke the protocol (the link is then unusable).
    public mutating func receive(datagram: [UInt8], now: Instant) throws(LinkError) {
        if let failure { throw failure }
        statistics.datagramsReceived += 1
        statistics.datagramBytesReceived += datagram.count
        let frame: Frame
        do {
            frame = try FrameCodec.decode(datagram)
        } catch {
            statistics.droppedCorrupt += 1
            return
        }
        statistics.framesReceived += 1
        switch frame {
        case let .ack(cumulative, selectiveAcks):
            statistics.acksReceived += 1
            processAck(cumulative: cumulative, bitmap: selectiveAcks, now: now)
        case let .data(sequence, fragment):
            do {
                try processData(sequence: sequence, fragment: fragment, now: now)
            } catch {
                let violation = LinkError.protocolViolation(error)
                failure = violation
                throw violation
            }
        }
    }

    /// The next complete message, in order.
    public mutating func nextMessage() -> [UInt8]? {
        inbound.nextMessage()
    }

    // MARK: Sending

    private mutating func count(_ datagram: [UInt8]) -> [UInt8] {
        statistics.datagramsSent += 1
        statistics.datagramBytesSent += datagram.count
        return datagram
    }

    /// The next frame of `message` (the first pending one), recorded in the send window.
    private mutating func nextNewFrame(of message: [UInt8], now: Instant) -> [UInt8] {
        let fragment = MessageFragmenter.fragment(of: message, at: pendingOffset, datagramSize: maxDatagramSize)
        let datagram = FrameCodec.encodeData(sequence: outbound.next, messageLength: fragment.messageLength,
                                             isEnd: fragment.isEnd, bytes: fragment.bytes)
        pendingOffset += fragment.bytes.count
        if fragment.isEnd {
            pending.removeFirst()
            pendingOffset = 0
        }
        outbound.add(datagram: datagram, payloadCount: fragment.bytes.count, now: now, rto: rtt.rto)
        statistics.dataFramesSent += 1
        statistics.payloadBytesSent += fragment.bytes.count
        return datagram
    }

    /// Queues every unacknowledged frame whose timeout expired; doubles the RTO once per round
    /// (not again for frames sent before the last doubling).
    private mutating func expireRetransmitTimers(now: Instant) {
        guard let lastSent = outbound.expireTimers(now: now, rto: rtt.rto) else { return }
        if rtt.backOff(frameSentAt: lastSent, now: now) { statistics.timeouts += 1 }
    }

    private mutating func processAck(cumulative: SequenceNumber, bitmap: [UInt8], now: Instant) {
        guard let ack = outbound.acknowledge(cumulative: cumulative, bitmap: bitmap, now: now) else {
            statistics.droppedOutOfWindow += 1   // stale (reordered) or acknowledging unsent frames
            return
        }
        if ack.frames > 0 { lastPeerProgress = now }
        bufferedOutboundBytes -= ack.payloadBytes
        if let sent = ack.sampleSentAt {
            let previous = rtt.rto
            rtt.addSample(now.nanoseconds(since: sent))
            if rtt.rto < previous { outbound.restartTimers(rto: rtt.rto) }
        }
        if ack.selectiveReach > 0 {
            statistics.fastRetransmissions += outbound.queueFastRetransmissions(
                before: ack.selectiveReach, gap: rtt.smoothedRTT ?? rtt.rto, now: now)
        }
    }

    // MARK: Receiving

    private mutating func processData(sequence: SequenceNumber, fragment: Fragment, now: Instant) throws(FramingError) {
        let delivered = inbound.messagesDelivered
        defer { statistics.messagesDelivered += inbound.messagesDelivered - delivered }
        switch try inbound.receive(sequence: sequence, fragment: fragment) {
        case .duplicate:
            statistics.droppedDuplicate += 1   // received before: our ack may have been lost
            acks.ackNow()
        case .outOfWindow:
            statistics.droppedOutOfWindow += 1
        case let .accepted(ackAtOnce):
            lastPeerProgress = now
            statistics.maxReorderBuffered = max(statistics.maxReorderBuffered, inbound.bufferedFrames)
            if ackAtOnce { acks.ackNow() }
            acks.frameAccepted(now: now)
        }
    }

    /// Frames allowed in flight: the configured window, but never more than one of the peer's acks
    /// can describe: its bitmap fits the smaller of the two directions' datagrams (at MTU 23 the
    /// receiver's 18-byte notifications hold a 14-byte bitmap: 112 frames). More in flight, and
    /// frames the peer did receive would be resent at every timeout.
    var effectiveWindow: Int {
        let ackDatagram = max(min(maxDatagramSize, peerMaxDatagramSize ?? maxDatagramSize), FrameLayout.minimumDatagramSize)
        return min(configuration.window, (ackDatagram - FrameLayout.ackFrameBaseSize) * 8)
    }
}

extension ReliableLink: DatagramEndpoint {
    public typealias Failure = LinkError
}
