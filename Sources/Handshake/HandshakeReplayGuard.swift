/// Replay protection for message 1 (protocol.md §3): accepts a timestamp from a peer only if it is
/// greater than the last one accepted from that peer's static key.
///
/// Memory is bounded: at most `capacity` peers are remembered; when a new peer arrives at a full
/// table, the peer accepted least recently is forgotten (so a replay from a forgotten peer would
/// be accepted again; choose `capacity` above the number of peers you expect).
public struct HandshakeReplayGuard {
    public let capacity: Int
    private var latest: [[UInt8]: Entry] = [:]
    /// Acceptance order, oldest first; entries whose sequence no longer matches `latest` are stale.
    private var order: [(peer: [UInt8], sequence: UInt64)] = []
    private var orderStart = 0
    private var nextSequence: UInt64 = 0

    private struct Entry { var timestamp: UInt64; var sequence: UInt64 }

    public init() { self.init(capacity: 4096) }

    public init(capacity: Int) { self.capacity = max(1, capacity) }

    /// A guard that starts out knowing `recalled` (what a `ReplayMemory` kept from earlier runs),
    /// the oldest timestamps taken first, so that they are the first forgotten.
    public init(capacity: Int = 4096, recalled: [ReplayMemoryEntry]) {
        self.init(capacity: capacity)
        for entry in recalled.sorted(by: { $0.timestamp < $1.timestamp }) {
            _ = accept(timestamp: entry.timestamp, from: entry.key)
        }
    }

    /// Number of peers remembered.
    public var count: Int { latest.count }

    /// How far past the receiver's own clock a message 1 timestamp may be (protocol.md §3,
    /// `MaxTimestampAhead`). Without a bound, one message stamped far in the future (a sender's
    /// clock that ran ahead once, or a forged 2^64-1) would lock its key out until a restart; with
    /// it, a sender whose clock ran ahead is locked out for at most this long.
    public static let maxTimestampAhead = Duration.seconds(600)

    public enum Verdict: Equatable, Sendable {
        /// Newer than anything accepted from this peer, and not too far ahead: accepted and remembered.
        case fresh
        /// Not newer than the last accepted from this peer.
        case replayed
        /// More than `maxTimestampAhead` past `wallClock`, by this many nanoseconds.
        case ahead(nanoseconds: UInt64)
    }

    /// Judges message 1's `timestamp` from `peer` against the receiver's `wallClock` (both in
    /// nanoseconds since the Unix epoch); a fresh one is remembered if `remember` (a stranger's
    /// is not until its key is trusted, `accept`: strangers must not push trusted peers out).
    public mutating func judge(timestamp: UInt64, from peer: [UInt8], wallClock: UInt64, remember: Bool = true) -> Verdict {
        let limit = wallClock.addingReportingOverflow(UInt64(Self.maxTimestampAhead.components.seconds) * 1_000_000_000)
        if !limit.overflow, timestamp > limit.partialValue { return .ahead(nanoseconds: timestamp - wallClock) }
        guard remember else { return isNewer(timestamp, from: peer) ? .fresh : .replayed }
        return accept(timestamp: timestamp, from: peer) ? .fresh : .replayed
    }

    private func isNewer(_ timestamp: UInt64, from peer: [UInt8]) -> Bool {
        latest[peer].map { timestamp > $0.timestamp } ?? true
    }

    /// True (and remembered) if `timestamp` is newer than the last accepted from `peer`.
    public mutating func accept(timestamp: UInt64, from peer: [UInt8]) -> Bool {
        guard isNewer(timestamp, from: peer) else { return false }
        if latest[peer] == nil, latest.count >= capacity { evictOldest() }
        latest[peer] = Entry(timestamp: timestamp, sequence: nextSequence)
        order.append((peer, nextSequence))
        nextSequence += 1
        compactIfNeeded()
        return true
    }

    private mutating func evictOldest() {
        while orderStart < order.count {
            let (peer, sequence) = order[orderStart]
            orderStart += 1
            if latest[peer]?.sequence == sequence {
                latest[peer] = nil
                return
            }
        }
    }

    /// Keeps `order` within twice the table size by dropping consumed and stale entries.
    private mutating func compactIfNeeded() {
        guard order.count - orderStart > 2 * capacity || orderStart > capacity else { return }
        order = order[orderStart...].filter { latest[$0.peer]?.sequence == $0.sequence }
        orderStart = 0
    }
}
