import Keys
import Synchronization

/// The receiver's trust directory as its handshakes see it (`TrustDirectory`): read again, if it
/// changed, before each new connection's session starts, on the receiver server's thread; and
/// what the private-discovery advertisements list, read on the peripheral's tasks.
final class LiveTrust: Sendable {
    private let directory: Mutex<TrustDirectory>

    init(_ directory: TrustDirectory) {
        self.directory = Mutex(directory)
    }

    var path: String { directory.withLock { $0.path } }
    /// The peers trusted now.
    var store: TrustStore { directory.withLock { $0.store } }

    /// The next `refresh` reads the directory again whatever its state (SIGHUP).
    func forget() { directory.withLock { $0.forget() } }

    /// Reads the directory again if it changed; the store that goes with the answer.
    func refresh() -> (TrustDirectory.Refresh, TrustStore) {
        directory.withLock { directory in (directory.refresh(), directory.store) }
    }
}
