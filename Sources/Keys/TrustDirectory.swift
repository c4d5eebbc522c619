#if canImport(Glibc)
import Glibc
#endif

/// A trust directory that a running receiver reads again whenever it changes, so that a `.pub`
/// added or removed takes effect for the next handshake without a restart (a stolen key is
/// removed by deleting its file: docs/threat-model.md, "What the victim must do").
///
/// `refresh()` compares a `stat` of the directory and of each `.pub` in it (identity, size,
/// mode, owner, modification and change times: an edit, a `chmod` or a replaced file all show)
/// with what it saw at the last read, and reads the keys again only when they differ. Reading
/// runs every check a start runs (`TrustStore.load`). A directory that fails them trusts nobody
/// until it is fixed: a removal must never be undone because a neighbouring file is damaged.
public struct TrustDirectory: Sendable {
    /// What changed at a `refresh()`.
    public enum Refresh: Sendable, Equatable {
        case unchanged
        /// Read again: the names of the peers added and removed (a key that moved to another
        /// name shows in both).
        case reloaded(added: [String], removed: [String])
        /// The directory fails the checks: nobody is trusted until it passes them again.
        case unusable(KeyError)
    }

    public let path: String
    /// The peers trusted now.
    public private(set) var store: TrustStore
    private var seen: Snapshot?

    /// Reads `path` (`TrustStore.load`'s checks and errors).
    public init(path: String) throws(KeyError) {
        self.path = path
        let snapshot = try Snapshot(directory: path)
        store = try TrustStore.load(directory: path)
        seen = snapshot
    }

    /// Reads the directory again if it changed since the last read.
    public mutating func refresh() -> Refresh {
        let now: Snapshot
        do {
            // Taken before the keys are read: a change made meanwhile shows at the next refresh.
            now = try Snapshot(directory: path)
            if now == seen { return .unchanged }
            let fresh = try TrustStore.load(directory: path)
            let before = Set(store.peers), after = Set(fresh.peers)
            store = fresh
            seen = now
            return .reloaded(added: after.subtracting(before).map(\.name).sorted(), removed: before.subtracting(after).map(\.name).sorted())
        } catch {
            store = TrustStore(peers: [])
            seen = nil
            return .unusable(error)
        }
    }

    /// Makes the next `refresh()` read the keys again even if nothing seems changed (a reload).
    public mutating func forget() { seen = nil }

    /// What `stat` says of the directory and of each `.pub` file in it.
    struct Snapshot: Equatable {
        struct Stamp: Equatable {
            let device: UInt64, inode: UInt64, size: Int64, mode: UInt32, owner: UInt32
            let modified: timespec, changed: timespec

            init(_ s: stat) {
                device = UInt64(s.st_dev)
                inode = UInt64(s.st_ino)
                size = Int64(s.st_size)
                mode = UInt32(s.st_mode)
                owner = UInt32(s.st_uid)
                modified = s.st_mtim
                changed = s.st_ctim
            }

            static func == (a: Stamp, b: Stamp) -> Bool {
                a.device == b.device && a.inode == b.inode && a.size == b.size && a.mode == b.mode && a.owner == b.owner
                    && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                    && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
            }
        }

        let directory: Stamp
        let files: [String: Stamp]

        init(directory path: String) throws(KeyError) {
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else {
                throw KeyError(.trustDirectory, "cannot open trust directory \(path): \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var status = stat()
            guard fstat(fd, &status) == 0 else {
                throw KeyError(.trustDirectory, "cannot check trust directory \(path): \(String(cString: strerror(errno)))")
            }
            directory = Stamp(status)
            var files: [String: Stamp] = [:]
            for name in try TrustStore.listPublicKeyFiles(fd, path) {
                var fileStatus = stat()
                guard fstatat(fd, name, &fileStatus, AT_SYMLINK_NOFOLLOW) == 0 else {
                    throw KeyError(.io, "cannot check \(path)/\(name): \(String(cString: strerror(errno)))")
                }
                files[name] = Stamp(fileStatus)
            }
            self.files = files
        }
    }
}
