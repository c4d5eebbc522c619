import Pipeline

/// The sender's half of selective repeat (docs/protocol.md §2): the data frames in flight, kept
/// until acknowledged, and when to send them again: at a retransmission timeout, or at once when
/// an ack's bitmap shows a later frame arrived (again only once a smoothed RTT has passed). Also
/// whether the link is dead: the oldest frame made no progress for `linkDeadAfter`.
///
/// The RTO and the smoothed RTT come from the caller's `RTTEstimator`, in nanoseconds as it keeps
/// them (no round trip through `Duration` per frame).
struct SendWindow {
    private struct Slot {
        var datagram: [UInt8]
        var payloadCount: Int
        var lastSent: Instant
        var transmissions: Int
        var acknowledged: Bool
        var retransmitQueued: Bool
    }

    /// What one ack did.
    struct Acknowledgement {
        /// Frames it acknowledged for the first time.
        var frames = 0
        /// Fragment bytes of the frames it acknowledged for the first time.
        var payloadBytes = 0
        /// The latest send time among the newly acknowledged frames that give a valid RTT sample
        /// (sent once, within 32 of the previous cumulative point).
        var sampleSentAt: Instant?
        /// 1 + the offset from the cumulative point of the last frame its bitmap reports; 0 if none.
        var selectiveReach = 0
    }

    /// No progress on the oldest frame for this long: the link is dead.
    let linkDeadAfter: Duration
    /// The oldest unacknowledged sequence number.
    private(set) var oldest = SequenceNumber.zero
    /// The sequence number of the next new frame.
    private(set) var next = SequenceNumber.zero

    /// Ring of `capacity` slots indexed by offset from `oldest`; `slots[head]` holds `oldest`.
    private var slots: [Slot?]
    private var head = 0
    private var queuedRetransmissions = 0
    /// No frame's retransmission timer expires before this (a lower bound, nil when nothing is timed).
    private(set) var retransmitDeadline: Instant?
    /// When the oldest unacknowledged frame last made progress.
    private var lastProgress = Instant.zero

    init(capacity: Int, linkDeadAfter: Duration) {
        self.linkDeadAfter = linkDeadAfter
        self.slots = Array(repeating: nil, count: capacity)
    }

    /// Frames that may be in flight at most (the largest window).
    var capacity: Int { slots.count }

    /// Frames sent and not yet acknowledged cumulatively.
    var inFlight: Int { oldest.distance(to: next) }

    /// Frames waiting to be sent again.
    var hasQueuedRetransmissions: Bool { queuedRetransmissions > 0 }

    /// Earliest retransmission timeout or link-dead check; nil with nothing in flight.
    var nextDeadline: Instant? {
        guard inFlight > 0 else { return nil }
        let dead = lastProgress.advanced(by: linkDeadAfter)
        guard let retransmitDeadline else { return dead }
        return min(dead, retransmitDeadline)
    }

    /// Frames are in flight and the oldest made no progress for `linkDeadAfter`.
    func isDead(now: Instant) -> Bool {
        inFlight > 0 && now >= lastProgress.advanced(by: linkDeadAfter)
    }

    /// Records the new frame `next`, sent at `now`, and advances `next`. The caller keeps
    /// `inFlight` below `capacity`.
    mutating func add(datagram: [UInt8], payloadCount: Int, now: Instant, rto: Int64) {
        if inFlight == 0 { lastProgress = now }
        slots[slot(inFlight)] = Slot(datagram: datagram, payloadCount: payloadCount, lastSent: now,
                                     transmissions: 1, acknowledged: false, retransmitQueued: false)
        next = next.advanced(by: 1)
        startTimer(now.advanced(byNanoseconds: rto))
    }

    /// The oldest frame queued for retransmission, now marked sent at `now`.
    mutating func nextRetransmission(now: Instant, rto: Int64) -> [UInt8]? {
        for offset in 0..<inFlight {
            let index = slot(offset)
            guard var frame = slots[index], frame.retransmitQueued else { continue }
            frame.retransmitQueued = false
            frame.transmissions += 1
            frame.lastSent = now
            slots[index] = frame
            queuedRetransmissions -= 1
            startTimer(now.advanced(byNanoseconds: rto))
            return frame.datagram
        }
        queuedRetransmissions = 0
        return nil
    }

    /// Queues every unacknowledged frame whose timer expired by `now`. Returns the latest last
    /// send time among them (for the RTO backoff), nil if none expired.
    mutating func expireTimers(now: Instant, rto: Int64) -> Instant? {
        guard let deadline = retransmitDeadline, now >= deadline else { return nil }
        var latestExpired: Instant?
        var nextExpiry: Instant?
        for offset in 0..<inFlight {
            let index = slot(offset)
            guard var frame = slots[index], !frame.acknowledged, !frame.retransmitQueued else { continue }
            let expiry = frame.lastSent.advanced(byNanoseconds: rto)
            if now >= expiry {
                frame.retransmitQueued = true
                slots[index] = frame
                queuedRetransmissions += 1
                latestExpired = max(latestExpired ?? frame.lastSent, frame.lastSent)
            } else {
                nextExpiry = min(nextExpiry ?? expiry, expiry)
            }
        }
        // Frames queued now get a fresh timer when they are sent; the others keep theirs
        // (a doubled RTO only moves them later, so nextExpiry stays a lower bound).
        retransmitDeadline = nextExpiry
        return latestExpired
    }

    /// Recomputes the earliest timer, after the RTO shrank.
    mutating func restartTimers(rto: Int64) {
        var earliest: Instant?
        for offset in 0..<inFlight {
            guard let frame = slots[slot(offset)], !frame.acknowledged, !frame.retransmitQueued else { continue }
            let expiry = frame.lastSent.advanced(byNanoseconds: rto)
            earliest = min(earliest ?? expiry, expiry)
        }
        retransmitDeadline = earliest
    }

    /// Applies an ack received at `now`: frames before `cumulative` leave the window, frames whose
    /// bit is set in `bitmap` (bits past the frames in flight are ignored) are marked. Nil: a stale
    /// ack (behind `oldest` or beyond `next`), ignored.
    mutating func acknowledge(cumulative: SequenceNumber, bitmap: [UInt8], now: Instant) -> Acknowledgement? {
        let advance = oldest.distance(to: cumulative)
        guard advance <= inFlight else { return nil }
        var result = Acknowledgement()
        for offset in 0..<advance {
            if var frame = slots[head] {
                acknowledge(&frame, offset: offset, into: &result)
            }
            slots[head] = nil
            head = (head + 1) % capacity
        }
        oldest = cumulative
        if advance > 0 { lastProgress = now }

        if !bitmap.isEmpty {
            let limit = min(bitmap.count * 8, inFlight - 1)
            if limit > 0 {
                for bit in 0..<limit where bitmap[bit >> 3] & (1 << UInt8(bit & 7)) != 0 {
                    let index = slot(bit + 1)
                    if var frame = slots[index] {
                        acknowledge(&frame, offset: advance + bit + 1, into: &result)
                        slots[index] = frame
                    }
                    result.selectiveReach = bit + 1
                }
            }
        }
        if inFlight == 0 { retransmitDeadline = nil }
        return result
    }

    /// Fast retransmit: queues the unacknowledged frames before `reach` (a later frame arrived,
    /// these did not): the first time at once, again only once `gap` (a smoothed RTT) has passed
    /// since their last transmission. Returns how many it queued.
    mutating func queueFastRetransmissions(before reach: Int, gap: Int64, now: Instant) -> Int {
        var queued = 0
        for offset in 0..<reach {
            let index = slot(offset)
            guard var frame = slots[index], !frame.acknowledged, !frame.retransmitQueued,
                  frame.transmissions == 1 || now.nanoseconds(since: frame.lastSent) >= gap
            else { continue }
            frame.retransmitQueued = true
            slots[index] = frame
            queuedRetransmissions += 1
            queued += 1
        }
        return queued
    }

    private func slot(_ offset: Int) -> Int {
        (head + offset) % capacity
    }

    private mutating func startTimer(_ expiry: Instant) {
        retransmitDeadline = min(retransmitDeadline ?? expiry, expiry)
    }

    /// RTT samples come only from frames the previous ack could have reported (within 32 of its
    /// cumulative point): a frame further out may have waited in the peer's reorder buffer behind
    /// a gap, and its "RTT" would be the repair time. Karn: never from retransmitted frames.
    private mutating func acknowledge(_ frame: inout Slot, offset: Int, into result: inout Acknowledgement) {
        guard !frame.acknowledged else { return }
        frame.acknowledged = true
        result.frames += 1
        result.payloadBytes += frame.payloadCount
        if frame.retransmitQueued {
            frame.retransmitQueued = false
            queuedRetransmissions -= 1
        }
        if frame.transmissions == 1, offset <= 32 {
            result.sampleSentAt = max(result.sampleSentAt ?? frame.lastSent, frame.lastSent)
        }
    }
}

extension Instant {
    /// `advanced(by: .nanoseconds(count))`, without the round trip through `Duration`.
    func advanced(byNanoseconds count: Int64) -> Instant {
        if count >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(count))
            return Instant(nanoseconds: overflow ? .max : sum)
        }
        let back = count.magnitude
        return Instant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
    }

    /// `duration(since: earlier).nanoseconds`, without the round trip through `Duration`.
    func nanoseconds(since earlier: Instant) -> Int64 {
        nanoseconds > earlier.nanoseconds ? Int64(clamping: nanoseconds - earlier.nanoseconds) : 0
    }
}
