#if canImport(Glibc)
import Glibc
#endif
import Handshake

/// `JournalDisk` on a real folder (the receiver's state directory): files 0600, opened without
/// following symlinks; an appended record is one `write`, `sync` is `fdatasync`.
public final class PosixJournalDisk: JournalDisk {
    public let folder: String
    private var appending: [String: Int32] = [:]

    /// Uses `folder`, made 0700 (with its missing parents) if it does not exist.
    public init(folder: String) throws(ReplayMemoryFailure) {
        self.folder = folder
        try Self.makeFolder(folder)
    }

    private static func makeFolder(_ path: String) throws(ReplayMemoryFailure) {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        guard errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            throw ReplayMemoryFailure(.open, errno: errno, path: path)
        }
        try makeFolder(String(path[..<slash]))
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw ReplayMemoryFailure(.open, errno: errno, path: path) }
    }

    deinit {
        for fd in appending.values { close(fd) }
    }

    private func path(_ name: String) -> String { folder + "/" + name }

    public func read(_ name: String) throws(ReplayMemoryFailure) -> [UInt8]? {
        let fd = open(path(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ReplayMemoryFailure(.open, errno: errno, path: path(name))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReplayMemoryFailure(.read, errno: errno, path: path(name))
            }
            if n == 0 { return bytes }
            bytes += buffer[..<n]
        }
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(ReplayMemoryFailure) {
        if let fd = appending.removeValue(forKey: name) { close(fd) }
        let temporary = path(".\(name).new")
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ReplayMemoryFailure(.open, errno: errno, path: temporary) }
        do throws(ReplayMemoryFailure) {
            try writeAll(fd, contents, path: temporary)
            guard fsync(fd) == 0 else { throw ReplayMemoryFailure(.sync, errno: errno, path: temporary) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path(name)) == 0 else {
            let code = errno
            unlink(temporary)
            throw ReplayMemoryFailure(.rename, errno: code, path: path(name))
        }
        try syncFolder()
    }

    public func append(_ name: String, _ bytes: [UInt8]) throws(ReplayMemoryFailure) {
        try writeAll(try appendDescriptor(name), bytes, path: path(name))
    }

    public func sync(_ name: String) throws(ReplayMemoryFailure) {
        guard fdatasync(try appendDescriptor(name)) == 0 else { throw ReplayMemoryFailure(.sync, errno: errno, path: path(name)) }
    }

    public func truncate(_ name: String, to length: Int) throws(ReplayMemoryFailure) {
        guard ftruncate(try appendDescriptor(name), off_t(length)) == 0 else {
            throw ReplayMemoryFailure(.truncate, errno: errno, path: path(name))
        }
    }

    private func appendDescriptor(_ name: String) throws(ReplayMemoryFailure) -> Int32 {
        if let fd = appending[name] { return fd }
        let fd = open(path(name), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw ReplayMemoryFailure(.open, errno: errno, path: path(name)) }
        appending[name] = fd
        return fd
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(ReplayMemoryFailure) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in raw.baseAddress.map { write(fd, $0 + done, raw.count - done) } ?? 0 }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReplayMemoryFailure(.write, errno: errno, path: path)
            }
            done += n
        }
    }

    private func syncFolder() throws(ReplayMemoryFailure) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ReplayMemoryFailure(.open, errno: errno, path: folder) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ReplayMemoryFailure(.sync, errno: errno, path: folder) }
    }
}
