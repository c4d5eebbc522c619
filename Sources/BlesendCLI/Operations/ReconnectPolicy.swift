import BlueZ
import Session

/// When a sender connects again, how long it looks, which receivers it skips, and when it gives up:
/// the rules `SendOperation` follows, without I/O (it is handed each outcome and the time).
///
/// - After a refusal (the receiver does not trust us, is not the one pinned, or never answered the
///   handshake) that device is skipped. Another receiver seen advertising in this run and not yet
///   tried is tried next (looking up to 5 s); if there is none, the first refusal gets one short
///   look (`lookAfterRefusal`) for a receiver not seen yet, and a later one is reported at once:
///   the refusal by the pinned receiver itself is what the user hears within seconds, not after
///   the whole scan timeout.
/// - A receiver that does not answer the handshake (no message 2 within `HandshakeTimeout`) when
///   no other receiver is left to try is taken to be busy with another sender (a receiver serves
///   one at a time and keeps the next one's channel waiting): it is tried again after
///   `busyRetryPause` plus up to a second of jitter, until `scanTimeout` has passed since it first
///   stayed silent; then the send ends with `receiverBusy` (75), not as a refusal.
/// - A receiver that proves its key and answers `busy` (every slot taken, docs/protocol.md §8.6)
///   is tried again when it said, plus up to a second of jitter, under the same `scanTimeout`
///   counted from when it was first busy; then the send ends with `receiverBusy` (75).
/// - A link that drops while it is being set up (before the transport opened) is a lost link too.
/// - After a lost link the receiver is looked for again for what is left of `scanTimeout`, counted
///   from the loss; anything but "not found" (adapter off, bluetoothd restarting, a peer still
///   exporting its services) is tried again every second within that budget.
/// - More than `maxFruitlessReconnects` reconnections in a row that moved no data end the send.
/// - Failures no retry can change end it at once: another local program holds the characteristic;
///   `--transport l2cap` and the receiver offers no channel, or it does not open on first contact.
struct ReconnectPolicy {
    /// What to do next.
    enum Decision {
        /// Scan and connect (again), looking for at most `scanTime`, after waiting `after`.
        case connect(scanTime: Duration, after: Duration)
        case fail(CLIError)
    }

    static let maxFruitlessReconnects = 5
    /// How long a sender looks for another receiver it has not seen yet after a refusal.
    static let lookAfterRefusal: Duration = .milliseconds(1500)
    /// The most a sender looks for a receiver it has seen already (it connects at once).
    static let tryNextReceiver: Duration = .seconds(5)
    static let retryPause: Duration = .seconds(1)
    static let minimumScan: Duration = .seconds(1)

    static let busyRetryPause: Duration = .seconds(2)

    static func busyReceiver(after timeout: Duration) -> CLIError {
        CLIError(.receiverBusy, "the receiver did not answer the handshake within \(CLIError.seconds(timeout)) s of trying: it is busy with another sender, or it is not a blesend receiver",
                 hint: "try again later, or raise --timeout to wait longer")
    }

    static func stayedBusy(after timeout: Duration) -> CLIError {
        CLIError(.receiverBusy, "the receiver stayed busy with other senders for \(CLIError.seconds(timeout)) s",
                 hint: "try again later, or raise --timeout to wait longer")
    }

    static let silentReceiver = CLIError(
        .peerRefused, "the device advertising the blesend service did not answer the handshake within 10 s",
        hint: "it may be busy with another sender, or not a blesend receiver; try again, or check that blerecv runs there")

    let scanTimeout: Duration
    let adapter: String?
    /// Devices that failed the handshake: another one nearby may hold the pinned key.
    private(set) var excluded: Set<String> = []
    /// Receivers seen advertising in this run and not tried yet.
    private(set) var untried: Set<String> = []
    /// Whether a scan has run since a refusal (it noted every receiver it saw).
    private var lookedAfterRefusal = false
    private(set) var reconnecting = false
    private var refusal: CLIError?
    private var fruitless = 0
    private var lostAt: ContinuousClock.Instant?
    /// When the receiver first stayed silent in the handshake (busy, or not a receiver).
    private var silentSince: ContinuousClock.Instant?
    /// Whether the last decision waits for a silent (busy) receiver, or one that said `busy`.
    private(set) var waitingForBusyReceiver = false
    /// When the receiver said `busy`: how many senders it told so before us still wait.
    private(set) var sendersAhead: Int?
    /// Up to a second, so that senders waiting for the same receiver do not come back in step.
    private let jitter: @Sendable () -> Duration

    init(scanTimeout: Duration, adapter: String?,
         jitter: @escaping @Sendable () -> Duration = { .milliseconds(Int64.random(in: 0...1000)) }) {
        self.scanTimeout = scanTimeout
        self.adapter = adapter
        self.jitter = jitter
    }

    /// The first connect.
    var start: Decision { .connect(scanTime: scanTimeout, after: .zero) }

    /// How long the next scan may look.
    func scanTime(now: ContinuousClock.Instant) -> Duration {
        var time = scanTimeout
        if refusal != nil { time = min(scanTimeout, untried.isEmpty ? Self.lookAfterRefusal : Self.tryNextReceiver) }
        if let lostAt { time = max(Self.minimumScan, min(time, scanTimeout - (now - lostAt))) }
        return time
    }

    /// A connection was made: `others` are the receivers its scan saw besides it.
    mutating func connected(to device: String?, others: Set<String>) {
        untried.formUnion(others.subtracting(excluded))
        if let device { untried.remove(device) }
    }

    /// Connecting failed.
    mutating func connectFailed(_ error: BlueZError, now: ContinuousClock.Instant) -> Decision {
        switch error {
        // Nothing a retry changes: another program holds the characteristic, the receiver has no
        // channel, or the bus does not let this user talk to bluetoothd.
        case .characteristicBusy, .l2capNotOffered, .accessDenied:
            return .fail(CLIError(error, adapter: adapter))
        case .l2cap where !reconnecting:
            return .fail(CLIError(error, adapter: adapter))
        default:
            break
        }
        if let refusal, error == .notFound { return .fail(refusal) }
        // The link came up and went away before the transport opened (the receiver ended a link
        // that was slow to open its channel, or the radio dropped it): a lost link like any other.
        if error == .linkLost {
            return lost(progressed: false, now: now,
                        giveUp: CLIError(.linkLost, "the link kept dropping before the transfer could start (\(fruitless + 1) attempts)",
                                         hint: "move closer to the receiver and send again"))
        }
        if let lostAt {
            if error == .notFound {
                return .fail(CLIError(.linkLost, "the link was lost and the receiver could not be found again within \(CLIError.seconds(scanTimeout)) s",
                                      hint: "nothing partial was kept as a real file; send again to resume"))
            }
            if now - lostAt < scanTimeout { return .connect(scanTime: scanTime(now: now), after: Self.retryPause) }
        }
        return .fail(CLIError(error, adapter: adapter, timeout: scanTimeout))
    }

    /// The session on a connection failed. `progressed`: this connection moved data;
    /// `anyProgress`: some connection did.
    mutating func sessionFailed(_ error: SessionError, device: String?, progressed: Bool, anyProgress: Bool,
                                now: ContinuousClock.Instant) -> Decision {
        waitingForBusyReceiver = false
        sendersAhead = nil
        if case .receiverBusy(let retryAfter, let ahead) = error {
            // The pinned receiver itself said so (message 2 authenticated): wait as it asks.
            let since = silentSince ?? now
            silentSince = since
            let pause = max(retryAfter, Self.minimumScan) + jitter()
            guard now - since + pause < scanTimeout else { return .fail(Self.stayedBusy(after: scanTimeout)) }
            waitingForBusyReceiver = true
            sendersAhead = ahead
            return .connect(scanTime: min(scanTimeout, Self.tryNextReceiver), after: pause)
        }
        if error == .handshakeTimeout, let device, !anyProgress, untried.subtracting([device]).isEmpty {
            untried.remove(device)
            let since = silentSince ?? now
            silentSince = since
            guard now - since + Self.busyRetryPause < scanTimeout else { return .fail(Self.busyReceiver(after: scanTimeout)) }
            waitingForBusyReceiver = true
            return .connect(scanTime: min(scanTimeout, Self.tryNextReceiver), after: Self.busyRetryPause + jitter())
        }
        if error == .refusedByPeer || error == .peerNotAuthenticated || error == .handshakeTimeout, let device, !anyProgress {
            excluded.insert(device)
            untried.remove(device)
            refusal = error == .handshakeTimeout ? Self.silentReceiver : CLIError(error)
            // Every receiver seen has said no, and a scan since the first refusal has looked for
            // others (each scan notes every receiver it sees): nothing is left to try.
            if untried.isEmpty, lookedAfterRefusal, let refusal { return .fail(refusal) }
            lookedAfterRefusal = true
            return .connect(scanTime: scanTime(now: now), after: .zero)
        }
        guard error.isRecoverable else { return .fail(CLIError(error)) }
        return lost(progressed: progressed, now: now,
                    giveUp: CLIError(.linkLost, "gave up after \(fruitless + 1) reconnections without progress"))
    }

    /// The link went away without an error.
    mutating func linkLost(progressed: Bool, now: ContinuousClock.Instant) -> Decision {
        lost(progressed: progressed, now: now,
             giveUp: CLIError(.linkLost, "the link kept dropping (\(fruitless + 1) reconnections without progress)",
                              hint: "move closer to the receiver and send again"))
    }

    private mutating func lost(progressed: Bool, now: ContinuousClock.Instant, giveUp: CLIError) -> Decision {
        fruitless = progressed ? 0 : fruitless + 1
        if fruitless > Self.maxFruitlessReconnects { return .fail(giveUp) }
        reconnecting = true
        lostAt = now
        return .connect(scanTime: scanTime(now: now), after: .zero)
    }
}
