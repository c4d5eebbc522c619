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

    // MARK: Sender state

    private struct OutboundFrame {
        var datagram: [UInt8]
        var payloadCount: Int
        var lastSent: Instant
        var transmissions: Int
        var acknowledged: Bool
        var retransmitQueued: Bool
    }

    /// Ring of `window` slots; `outbound[outHead]` holds `sendUnacknowledged`.
    private var outbound: [OutboundFrame?]
    private var outHead = 0
    private var sendUnacknowledged = SequenceNumber.zero
    private var sendNext = SequenceNumber.zero
    private var inFlight: Int { sendUnacknowledged.distance(to: sendNext) }
    private var queuedRetransmits = 0

    private var pending: [[UInt8]] = []
    private var pendingHead = 0
    private var pendingOffset = 0
    public private(set) var bufferedOutboundBytes = 0

    private var smoothedRTT: Int64?
    private var rttVariance: Int64 = 0
    private var rto: Int64
    private var lastBackoff: Instant?
    /// No frame's retransmission timer expires before this (a lower bound, nil when nothing is timed).
    private var retransmitDeadline: Instant?
    /// When the oldest unacknowledged frame last made progress.
    private var lastProgress = Instant.zero

    // MARK: Receiver state

    /// Ring of `window` slots; `inbound[inHead]` is for `receiveNext`.
    private var inbound: [Fragment?]
    private var inHead = 0
    private var receiveNext = SequenceNumber.zero
    private var reorderBuffered = 0
    /// Fragment bytes held in `inbound` (out-of-order frames).
    private var reorderBufferedBytes = 0
    private var reassembler: MessageReassembler
    private var delivered: [[UInt8]] = []
    private var deliveredHead = 0

    private var framesSinceAck = 0
    private var ackDeadline: Instant?
    private var ackImmediately = false

    private var failure: LinkError?

    // MARK: API

    public init(configuration: LinkConfiguration = .init(), maxDatagramSize: Int) {
        let configuration = configuration.clamped
        self.configuration = configuration
        self.maxDatagramSize = max(maxDatagramSize, FrameLayout.minimumDatagramSize)
        self.outbound = Array(repeating: nil, count: configuration.window)
        self.inbound = Array(repeating: nil, count: configuration.window)
        self.reassembler = MessageReassembler(maxMessageLength: configuration.maxMessageLength)
        self.receiveWindow = configuration.window
        self.rto = configuration.initialRTO.nanoseconds
    }

    /// The longest message accepted from the peer: `configuration.maxMessageLength` unless lowered,
    /// e.g. by a session before the peer has authenticated (a start frame announcing more ends the
    /// connection). Clamped to 1...`configuration.maxMessageLength`.
    public var maxIncomingMessageLength: Int {
        get { reassembler.maxMessageLength }
        set { reassembler.maxMessageLength = min(newValue, configuration.maxMessageLength) }
    }

    /// Data frames accepted from the next expected one on (so at most `receiveWindow - 1` held out
    /// of order): `configuration.window` unless lowered, e.g. by a session before the peer has
    /// authenticated. Frames beyond it are dropped as out of window and retransmitted by the peer.
    /// Clamped to 1...`configuration.window`.
    public var receiveWindow: Int {
        didSet { receiveWindow = min(max(receiveWindow, 1), configuration.window) }
    }

    /// Bytes from the peer held here and not yet taken with `nextMessage`: fragments buffered out
    /// of order, the message being reassembled (its announced length, which is reserved at its
    /// start), and delivered messages. Each buffered fragment is a slice of its datagram, so what
    /// stays in memory for it is the datagram (at most `maxDatagramSize` bytes).
    public var bufferedInboundBytes: Int {
        reorderBufferedBytes + reassembler.reservedBytes
            + delivered[deliveredHead...].reduce(0) { $0 + $1.count }
    }

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
        pendingHead == pending.count && inFlight == 0 && !ackImmediately && ackDeadline == nil
    }

    /// The current retransmission timeout.
    public var retransmissionTimeout: Duration { .nanoseconds(rto) }

    /// The smoothed round-trip time, once measured.
    public var smoothedRoundTripTime: Duration? { smoothedRTT.map { .nanoseconds($0) } }

    /// Earliest time `handleTimers` has work: ack delay, retransmission timeout, link-dead check.
    /// (Work that is due already, such as an immediate ack, is returned by `nextDatagram`.)
    public var nextDeadline: Instant? {
        guard failure == nil else { return nil }
        var deadline = ackDeadline
        if inFlight > 0 {
            let dead = lastProgress.advanced(by: configuration.linkDeadAfter)
            deadline = min(deadline ?? dead, dead)
            if let retransmitDeadline { deadline = min(deadline ?? retransmitDeadline, retransmitDeadline) }
        }
        return deadline
    }

    /// Runs the timers: turns a due delayed ack into an immediate one, queues retransmissions
    /// whose timeout expired. Throws `.linkDead` when the oldest frame made no progress for
    /// `linkDeadAfter`.
    public mutating func handleTimers(now: Instant) throws(LinkError) {
        if let failure { throw failure }
        if let ackDeadline, now >= ackDeadline { ackImmediately = true }
        if inFlight > 0, now >= lastProgress.advanced(by: configuration.linkDeadAfter) {
            failure = .linkDead
            throw .linkDead
        }
        expireRetransmitTimers(now: now)
    }

    /// The next datagram to transmit now: an owed ack first, then retransmissions, then new
    /// frames within the window. Nil: nothing to send now.
    public mutating func nextDatagram(now: Instant) -> [UInt8]? {
        guard failure == nil else { return nil }
        if ackImmediately || ackDeadline.map({ now >= $0 }) == true {
            let datagram = FrameCodec.encodeAck(cumulative: receiveNext, selectiveAcks: selectiveAckBitmap())
            ackImmediately = false
            ackDeadline = nil
            framesSinceAck = 0
            statistics.acksSent += 1
            return count(datagram)
        }
        expireRetransmitTimers(now: now)
        if queuedRetransmits > 0, let datagram = nextRetransmission(now: now) {
            return count(datagram)
        }
        if inFlight < effectiveWindow, pendingHead < pending.count {
            return count(nextNewFrame(now: now))
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
                let violation = LinkError.protocolViolation("\(error)")
                failure = violation
                throw violation
            }
        }
    }

    /// The next complete message, in order.
    public mutating func nextMessage() -> [UInt8]? {
        guard deliveredHead < delivered.count else { return nil }
        let message = delivered[deliveredHead]
        delivered[deliveredHead] = []
        deliveredHead += 1
        if deliveredHead == delivered.count {
            delivered.removeAll(keepingCapacity: true)
            deliveredHead = 0
        }
        return message
    }

    // MARK: Sending

    private mutating func count(_ datagram: [UInt8]) -> [UInt8] {
        statistics.datagramsSent += 1
        statistics.datagramBytesSent += datagram.count
        return datagram
    }

    private func slotIndex(_ ring: Int, offset: Int) -> Int {
        (ring + offset) % configuration.window
    }

    private mutating func nextNewFrame(now: Instant) -> [UInt8] {
        let message = pending[pendingHead]
        let fragment = MessageFragmenter.fragment(of: message, at: pendingOffset, datagramSize: maxDatagramSize)
        let datagram = FrameCodec.encodeData(sequence: sendNext, messageLength: fragment.messageLength,
                                             isEnd: fragment.isEnd, bytes: fragment.bytes)
        pendingOffset += fragment.bytes.count
        if fragment.isEnd {
            pending[pendingHead] = []
            pendingHead += 1
            pendingOffset = 0
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            } else if pendingHead >= 64, pendingHead * 2 >= pending.count {
                pending.removeFirst(pendingHead)
                pendingHead = 0
            }
        }
        if inFlight == 0 { lastProgress = now }
        outbound[slotIndex(outHead, offset: inFlight)] = OutboundFrame(
            datagram: datagram, payloadCount: fragment.bytes.count, lastSent: now,
            transmissions: 1, acknowledged: false, retransmitQueued: false)
        sendNext = sendNext.advanced(by: 1)
        let expiry = now.advanced(by: .nanoseconds(rto))
        retransmitDeadline = min(retransmitDeadline ?? expiry, expiry)
        statistics.dataFramesSent += 1
        statistics.payloadBytesSent += fragment.bytes.count
        return datagram
    }

    private mutating func nextRetransmission(now: Instant) -> [UInt8]? {
        for offset in 0..<inFlight {
            let index = slotIndex(outHead, offset: offset)
            guard var frame = outbound[index], frame.retransmitQueued else { continue }
            frame.retransmitQueued = false
            frame.transmissions += 1
            frame.lastSent = now
            outbound[index] = frame
            queuedRetransmits -= 1
            statistics.retransmissions += 1
            let expiry = now.advanced(by: .nanoseconds(rto))
            retransmitDeadline = min(retransmitDeadline ?? expiry, expiry)
            return frame.datagram
        }
        queuedRetransmits = 0
        return nil
    }

    /// Queues every unacknowledged frame whose timeout expired; doubles the RTO once per round
    /// (not again for frames sent before the last doubling).
    private mutating func expireRetransmitTimers(now: Instant) {
        guard let deadline = retransmitDeadline, now >= deadline else { return }
        var backoff = false
        var nextExpiry: Instant?
        for offset in 0..<inFlight {
            let index = slotIndex(outHead, offset: offset)
            guard var frame = outbound[index], !frame.acknowledged, !frame.retransmitQueued else { continue }
            let expiry = frame.lastSent.advanced(by: .nanoseconds(rto))
            if now >= expiry {
                frame.retransmitQueued = true
                outbound[index] = frame
                queuedRetransmits += 1
                if lastBackoff.map({ frame.lastSent >= $0 }) ?? true { backoff = true }
            } else {
                nextExpiry = min(nextExpiry ?? expiry, expiry)
            }
        }
        if backoff {
            rto = min(rto.multipliedReportingOverflow(by: 2).partialValue, configuration.maxRTO.nanoseconds)
            lastBackoff = now
            statistics.timeouts += 1
        }
        // Frames queued now get a fresh timer when they are sent; the others keep theirs
        // (a doubled RTO only moves them later, so nextExpiry stays a lower bound).
        retransmitDeadline = nextExpiry
    }

    private mutating func recomputeRetransmitDeadline() {
        var next: Instant?
        for offset in 0..<inFlight {
            guard let frame = outbound[slotIndex(outHead, offset: offset)],
                  !frame.acknowledged, !frame.retransmitQueued else { continue }
            let expiry = frame.lastSent.advanced(by: .nanoseconds(rto))
            next = min(next ?? expiry, expiry)
        }
        retransmitDeadline = next
    }

    private mutating func processAck(cumulative: SequenceNumber, bitmap: [UInt8], now: Instant) {
        let advance = sendUnacknowledged.distance(to: cumulative)
        guard advance <= inFlight else {
            statistics.droppedOutOfWindow += 1   // stale (reordered) or acknowledging unsent frames
            return
        }
        // RTT samples come only from frames the previous ack could have reported (within 32 of
        // its cumulative point): a frame further out may have waited in the peer's reorder buffer
        // behind a gap, and its "RTT" would be the repair time. Karn: never from retransmitted frames.
        var sampleSent: Instant?
        func acknowledge(_ frame: inout OutboundFrame, _ link: inout ReliableLink, offset: Int) {
            guard !frame.acknowledged else { return }
            frame.acknowledged = true
            link.bufferedOutboundBytes -= frame.payloadCount
            if frame.retransmitQueued {
                frame.retransmitQueued = false
                link.queuedRetransmits -= 1
            }
            if frame.transmissions == 1, offset <= 32 {
                sampleSent = max(sampleSent ?? frame.lastSent, frame.lastSent)
            }
        }
        for offset in 0..<advance {
            if var frame = outbound[outHead] {
                acknowledge(&frame, &self, offset: offset)
            }
            outbound[outHead] = nil
            outHead = (outHead + 1) % configuration.window
        }
        sendUnacknowledged = cumulative
        if advance > 0 { lastProgress = now }

        var highestSelective = 0
        if !bitmap.isEmpty {
            let limit = min(bitmap.count * 8, inFlight - 1)
            if limit > 0 {
                for bit in 0..<limit where bitmap[bit >> 3] & (1 << UInt8(bit & 7)) != 0 {
                    let index = slotIndex(outHead, offset: bit + 1)
                    if var frame = outbound[index] {
                        acknowledge(&frame, &self, offset: advance + bit + 1)
                        outbound[index] = frame
                    }
                    highestSelective = bit + 1
                }
            }
        }

        if let sampleSent { updateRTT(sample: now.duration(since: sampleSent).nanoseconds) }

        // Fast retransmit: a later frame arrived but these did not. The first time at once; again
        // only once a smoothed RTT has passed since the last transmission.
        if highestSelective > 0 {
            let gap = smoothedRTT ?? rto
            for offset in 0..<highestSelective {
                let index = slotIndex(outHead, offset: offset)
                guard var frame = outbound[index], !frame.acknowledged, !frame.retransmitQueued,
                      frame.transmissions == 1 || now.duration(since: frame.lastSent).nanoseconds >= gap
                else { continue }
                frame.retransmitQueued = true
                outbound[index] = frame
                queuedRetransmits += 1
                statistics.fastRetransmissions += 1
            }
        }
        if inFlight == 0 { retransmitDeadline = nil }
    }

    /// RFC 6298 §2 with G = 1 ms, clamped to [minRTO, maxRTO].
    private mutating func updateRTT(sample: Int64) {
        let r = max(sample, 0)
        if let srtt = smoothedRTT {
            rttVariance = (3 * rttVariance + abs(srtt - r)) / 4
            smoothedRTT = (7 * srtt + r) / 8
        } else {
            smoothedRTT = r
            rttVariance = r / 2
        }
        let srtt = smoothedRTT ?? r
        let candidate = srtt + max(1_000_000, 4 * rttVariance)
        let newRTO = min(max(candidate, configuration.minRTO.nanoseconds), configuration.maxRTO.nanoseconds)
        let shrank = newRTO < rto
        rto = newRTO
        lastBackoff = nil
        if shrank { recomputeRetransmitDeadline() }
    }

    // MARK: Receiving

    private mutating func processData(sequence: SequenceNumber, fragment: Fragment, now: Instant) throws(FramingError) {
        let window = configuration.window
        let offset = receiveNext.distance(to: sequence)
        guard offset < receiveWindow else {
            if sequence.distance(to: receiveNext) <= window {
                statistics.droppedDuplicate += 1   // delivered already; our ack was probably lost
                ackImmediately = true
            } else {
                statistics.droppedOutOfWindow += 1
            }
            return
        }
        if offset == 0 {
            try deliver(fragment)
            advanceReceiveWindow()
            var filledHole = false
            while let buffered = inbound[inHead] {
                inbound[inHead] = nil
                reorderBuffered -= 1
                reorderBufferedBytes -= buffered.bytes.count
                try deliver(buffered)
                advanceReceiveWindow()
                filledHole = true
            }
            if filledHole { ackImmediately = true }
        } else {
            let index = slotIndex(inHead, offset: offset)
            guard inbound[index] == nil else {
                statistics.droppedDuplicate += 1
                ackImmediately = true
                return
            }
            inbound[index] = fragment
            reorderBuffered += 1
            reorderBufferedBytes += fragment.bytes.count
            statistics.maxReorderBuffered = max(statistics.maxReorderBuffered, reorderBuffered)
            // A frame that opens a new gap is reported at once (it drives fast retransmit);
            // later frames of the same run wait for the usual ack.
            if offset == 1 || inbound[slotIndex(inHead, offset: offset - 1)] == nil { ackImmediately = true }
        }
        framesSinceAck += 1
        if framesSinceAck >= configuration.ackEvery { ackImmediately = true }
        if ackDeadline == nil { ackDeadline = now.advanced(by: configuration.ackDelay) }
    }

    private mutating func deliver(_ fragment: Fragment) throws(FramingError) {
        if let message = try reassembler.append(fragment) {
            delivered.append(message)
            statistics.messagesDelivered += 1
        }
    }

    private mutating func advanceReceiveWindow() {
        receiveNext = receiveNext.advanced(by: 1)
        inHead = (inHead + 1) % configuration.window
    }

    /// Frames allowed in flight: the configured window, but never more than one of the peer's acks
    /// can describe: its bitmap fits the smaller of the two directions' datagrams (at MTU 23 the
    /// receiver's 18-byte notifications hold a 14-byte bitmap: 112 frames). More in flight, and
    /// frames the peer did receive would be resent at every timeout.
    var effectiveWindow: Int {
        let ackDatagram = max(min(maxDatagramSize, peerMaxDatagramSize ?? maxDatagramSize), FrameLayout.minimumDatagramSize)
        return min(configuration.window, (ackDatagram - FrameLayout.ackFrameBaseSize) * 8)
    }

    /// Which frames after the cumulative point are buffered, up to the last one, as few bytes as
    /// that takes (and no more than the datagram holds).
    private func selectiveAckBitmap() -> [UInt8] {
        guard reorderBuffered > 0 else { return [] }
        let reach = min(configuration.window - 1, (maxDatagramSize - FrameLayout.ackFrameBaseSize) * 8)
        var bitmap = [UInt8](repeating: 0, count: (reach + 7) / 8)
        var used = 0
        for bit in 0..<reach where inbound[slotIndex(inHead, offset: bit + 1)] != nil {
            bitmap[bit >> 3] |= 1 << UInt8(bit & 7)
            used = (bit >> 3) + 1
        }
        bitmap.removeLast(bitmap.count - used)
        return bitmap
    }
}
