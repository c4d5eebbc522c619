#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Every named temporary (staging folder, or a file's temporary where the file system has no
/// `O_TMPFILE`) this process has, so that an interrupt (Ctrl-C) can remove them all before
/// exiting: no partial file or folder survives a signal. Each is kept as a duplicate of the
/// descriptor of the folder it is in and its name there, so it is removed from that folder even
/// if the folder's path now leads elsewhere. (A file with no name needs nothing: the kernel frees
/// it when the process ends.)
public final class OpenTemporaries: Sendable {
    public static let shared = OpenTemporaries()

    public struct Token: Hashable, Sendable {
        fileprivate let value: Int
    }

    private struct Entry {
        let directory: Int32
        let name: [UInt8]
    }

    private let state = Mutex((next: 0, entries: [Int: Entry]()))

    /// Registers `name` in the directory open at `directory` (which is duplicated: the caller
    /// keeps its own descriptor). `nil` if the descriptor cannot be duplicated.
    func insert(_ name: String, in directory: Int32) -> Token? {
        let copy = fcntl(directory, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        return state.withLock { state in
            state.next += 1
            state.entries[state.next] = Entry(directory: copy, name: Array(name.utf8))
            return Token(value: state.next)
        }
    }

    /// Forgets a temporary (committed, or removed by its owner).
    func remove(_ token: Token?) {
        guard let token else { return }
        if let entry = state.withLock({ $0.entries.removeValue(forKey: token.value) }) { close(entry.directory) }
    }

    public var count: Int { state.withLock { $0.entries.count } }

    /// Removes every registered temporary (a folder with all it holds, never following a symlink).
    /// Safe to call from a signal-handling task.
    public func removeAll() {
        let all = state.withLock { state -> [Entry] in
            defer { state.entries.removeAll() }
            return Array(state.entries.values)
        }
        for entry in all {
            removeEntry(named: entry.name, in: entry.directory)
            close(entry.directory)
        }
    }
}
