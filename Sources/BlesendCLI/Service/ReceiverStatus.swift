import Synchronization

/// The running receiver's `ReceiverActivity`, kept up to date by its report and told to systemd
/// (`STATUS=`, when the line changed: at once when a link or a file came or went, else at most
/// once per `interval`). Read from any thread (`snapshot`).
final class ReceiverStatus: Sendable {
    private struct State {
        var activity: ReceiverActivity
        var sentLine: String?
        var sentAt: ContinuousClock.Instant?
        /// The links and the files in progress when the line was sent: a change there is told at
        /// once, progress alone at most once per `interval`.
        var sentShape: [UInt64: String?] = [:]
    }

    private let state: Mutex<State>
    private let notifier: SystemdNotifier?
    /// The least time between two status lines for the same number of links.
    static let interval = Duration.seconds(1)

    init(activity: ReceiverActivity, notifier: SystemdNotifier?) {
        state = Mutex(State(activity: activity))
        self.notifier = notifier
    }

    var snapshot: ReceiverActivity { state.withLock { $0.activity } }

    /// Applies `change`, and tells systemd the new line when it is due.
    func update(_ change: (inout ReceiverActivity) -> Void) {
        let now = ContinuousClock.now
        let line: String? = state.withLock { state in
            change(&state.activity)
            // (progress alone, within the interval: not even the line is made; this runs at every
            // progress event of every connection)
            let shape = state.activity.shape
            if shape == state.sentShape, let at = state.sentAt, now - at < Self.interval { return nil }
            let line = state.activity.statusLine
            guard line != state.sentLine else { return nil }
            state.sentLine = line
            state.sentAt = now
            state.sentShape = shape
            return line
        }
        if let line { notifier?.send([.status(line)]) }
    }

    /// Advertising and taking senders.
    func ready() {
        notifier?.send([.ready, .status(snapshot.statusLine)])
    }

    /// SIGHUP: reading the trust directory again, then ready at once (it is read before the next handshake).
    func reloaded() {
        notifier?.send([.reloading(monotonicMicroseconds: SystemdNotifier.monotonicMicroseconds())])
        notifier?.send([.ready, .status(snapshot.statusLine)])
    }

    func stopping() {
        notifier?.send([.stopping])
    }
}
