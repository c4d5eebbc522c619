import BlueZ
import Glibc

/// One blesend at a time on an adapter (issue 31, item 6). Two runs on one adapter share its link
/// to a receiver, and one cuts the other: in the lab the second run's channel superseded the
/// first's, which then reported a lost link and reconnected. A run holds an advisory lock
/// (`flock`) on `/run/lock/blesend-<adapter>.lock` while it sends; the next one waits for it and
/// says so. The kernel drops the lock when its holder exits or dies. Where no lock can be had (no
/// such folder, a file another user made unreadable), the run goes on without one.
final class AdapterLock {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    static let folder = "/run/lock"

    /// The lock file for `adapter`, or for BlueZ's default adapter when nil (the first of this
    /// machine's adapters as bluetoothd sorts their paths); nil when there is none.
    static func path(adapter: String?, folder: String = folder, adapters: () -> [String] = systemAdapters) -> String? {
        guard let name = adapter ?? defaultAdapter(among: adapters()) else { return nil }
        return "\(folder)/blesend-\(AdapterStatus.name(of: name)).lock"
    }

    /// bluetoothd's default adapter among `names` (`hciN`): the first path in byte order.
    static func defaultAdapter(among names: [String]) -> String? {
        names.filter { $0.hasPrefix("hci") && $0.count > 3 && $0.dropFirst(3).allSatisfy(\.isNumber) }.min()
    }

    /// The adapters the kernel has (`/sys/class/bluetooth`, whose `hciN:handle` entries are links).
    static func systemAdapters() -> [String] {
        guard let dir = opendir("/sys/class/bluetooth") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            names.append(name)
        }
        return names
    }

    /// Takes the lock at `path`, waiting while another run holds it (`waiting` is called once,
    /// when it must wait). Nil when the lock file cannot be opened.
    static func acquire(path: String, poll: Duration = .milliseconds(250), waiting: () -> Void) async -> AdapterLock? {
        guard let fd = open(path) else { return nil }
        let lock = AdapterLock(fd: fd)
        var told = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { return nil }
            if !told { waiting() }
            told = true
            try? await Task.sleep(for: poll)
        }
        return lock
    }

    /// Opens the lock file read-only (enough for `flock`), making it readable for every user if
    /// it is not there (not `O_CREAT` on a file that is: in a sticky folder the kernel refuses
    /// that for another user's file, `fs.protected_regular`).
    private static func open(_ path: String) -> Int32? {
        for _ in 0..<2 {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if fd >= 0 { return fd }
            guard errno == ENOENT else { return nil }
            let made = Glibc.open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if made >= 0 {
                _ = fchmod(made, 0o644)
                return made
            }
            guard errno == EEXIST else { return nil }
        }
        return nil
    }
}
