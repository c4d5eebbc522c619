import Pipeline

/// When the receiver sends an ack frame (docs/protocol.md §2): after every `ackEvery` accepted
/// frames, `ackDelay` after the first frame not yet acknowledged, or at once when asked
/// (a duplicate, a new gap, a filled gap).
struct AckScheduler {
    let ackEvery: Int
    let ackDelay: Duration
    /// Frames accepted since the last ack.
    private(set) var framesSinceAck = 0
    /// When the delayed ack falls due; nil when no frame waits for one.
    private(set) var deadline: Instant?
    /// An ack is owed now.
    private(set) var isImmediate = false

    init(ackEvery: Int, ackDelay: Duration) {
        self.ackEvery = ackEvery
        self.ackDelay = ackDelay
    }

    /// An ack is owed, now or later.
    var isOwed: Bool { isImmediate || deadline != nil }

    /// Whether an ack should be sent at `now`.
    func isDue(now: Instant) -> Bool {
        isImmediate || deadline.map { now >= $0 } == true
    }

    /// Owe an ack at once.
    mutating func ackNow() {
        isImmediate = true
    }

    /// A data frame was accepted at `now`: counts it and starts the delay if none runs.
    mutating func frameAccepted(now: Instant) {
        framesSinceAck += 1
        if framesSinceAck >= ackEvery { isImmediate = true }
        if deadline == nil { deadline = now.advanced(by: ackDelay) }
    }

    /// Turns a delayed ack whose time has come into an immediate one.
    mutating func handleTimer(now: Instant) {
        if let deadline, now >= deadline { isImmediate = true }
    }

    /// An ack was sent: nothing is owed any more.
    mutating func ackSent() {
        isImmediate = false
        deadline = nil
        framesSinceAck = 0
    }
}
