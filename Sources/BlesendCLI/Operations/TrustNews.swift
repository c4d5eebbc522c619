import Keys

/// What blerecv says when its trust directory changes (`LiveTrust`): each change once, and a
/// directory that fails its checks once, until it passes them again (it is looked at before
/// every handshake). Used on the receiver server's thread only.
final class TrustNews {
    private let reporter: Reporter
    private var lastProblem: KeyError?

    init(reporter: Reporter) {
        self.reporter = reporter
    }

    func tell(_ refresh: TrustDirectory.Refresh, path: String, trusted: Int) {
        switch refresh {
        case .unchanged:
            return
        case .reloaded(let added, let removed):
            let wasUnusable = lastProblem != nil
            lastProblem = nil
            var changes: [String] = []
            if !added.isEmpty { changes.append("added \(added.joined(separator: ", "))") }
            if !removed.isEmpty { changes.append("removed \(removed.joined(separator: ", "))") }
            if changes.isEmpty && !wasUnusable {
                reporter.logger.info("trust directory \(path) read again: no key added or removed (\(trusted) trusted)")
            } else {
                let what = changes.isEmpty ? "usable again" : changes.joined(separator: "; ")
                reporter.logger.notice("trust directory \(path) read again: \(what) (\(trusted) trusted from the next handshake on)")
            }
        case .unusable(let problem):
            guard problem != lastProblem else { return }
            lastProblem = problem
            reporter.logger.error("trust directory \(path) cannot be used (\(problem)): no sender is trusted until it is fixed")
        }
    }
}
