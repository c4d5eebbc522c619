#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Every temporary file and staging folder this process has open, so that an interrupt (Ctrl-C)
/// can remove them all before exiting: no partial file or folder survives a signal.
public final class OpenTemporaries: Sendable {
    public static let shared = OpenTemporaries()

    private let paths = Mutex(Set<String>())

    func insert(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    public var count: Int { paths.withLock { $0.count } }

    /// Removes every registered temporary (a folder with all it holds, never following a symlink).
    /// Safe to call from a signal-handling task.
    public func removeAll() {
        let all = paths.withLock { current -> Set<String> in
            defer { current.removeAll() }
            return current
        }
        for path in all { removeEntry(atPath: path) }
    }
}
