#if canImport(Glibc)
import Glibc
#endif
import Pipeline

/// `DurableDisk` on a real folder (the state directory, or a folder in it): files 0600 of this
/// user's, opened without following a symlink and never blocking on a FIFO; a file's descriptor
/// is kept from its first use until it is closed, replaced or removed. `sync` is `fdatasync`.
public final class PosixDisk: DurableDisk {
    public let folder: String
    private var descriptors: [String: Int32] = [:]

    /// Uses `folder`, made 0700 (with its missing parents) if it does not exist, and checked as an
    /// output folder is: a folder, not a symlink, that other users cannot tamper with
    /// (`folderWriteProblem`).
    public init(folder: String) throws(StorageError) {
        self.folder = folder
        try Self.makeFolder(folder)
        var status = stat()
        guard lstat(folder, &status) == 0 else { throw Self.failure(errno, "cannot look at", folder) }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw StorageError(.notWritable, "\(folder) is not a folder (a symlink is not followed)")
        }
        if let problem = folderWriteProblem(status, euid: geteuid()) {
            throw StorageError(.notWritable, "\(folder) is refused as a state folder: \(problem)")
        }
    }

    deinit {
        for fd in descriptors.values { Glibc.close(fd) }
    }

    private static func makeFolder(_ path: String) throws(StorageError) {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        guard errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            throw failure(errno, "cannot create", path)
        }
        try makeFolder(String(path[..<slash]))
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw failure(errno, "cannot create", path) }
    }

    /// `errno` as a storage error about `path`.
    static func failure(_ code: Int32, _ what: String, _ path: String) -> StorageError {
        let kind: StorageError.Code = switch code {
        case ENOSPC, EDQUOT: .noSpace
        case EACCES, EPERM, EROFS: .notWritable
        case EEXIST: .exists
        default: .io
        }
        return StorageError(kind, "\(what) \(path): \(systemMessage(code))")
    }

    private func path(_ name: String) -> String { folder + "/" + name }

    public func exists(_ name: String) -> Bool { entryStatus(name) != nil }

    public func create(_ name: String) throws(StorageError) {
        let fd = open(path(name), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure(errno, "cannot create", path(name)) }
        closeFile(name)
        descriptors[name] = fd
    }

    public func write(_ name: String, _ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        try writeFully(try descriptor(name), bytes, at: offset, name: path(name))
    }

    public func read(_ name: String, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try readFully(try descriptor(name), count: count, at: offset, name: path(name))
    }

    public func length(_ name: String) throws(StorageError) -> UInt64 {
        var status = stat()
        guard fstat(try descriptor(name), &status) == 0 else { throw Self.failure(errno, "cannot look at", path(name)) }
        return UInt64(status.st_size)
    }

    public func truncate(_ name: String, to length: UInt64) throws(StorageError) {
        guard ftruncate(try descriptor(name), off_t(length)) == 0 else { throw Self.failure(errno, "cannot cut", path(name)) }
    }

    public func sync(_ name: String) throws(StorageError) {
        guard fdatasync(try descriptor(name)) == 0 else { throw Self.failure(errno, "cannot sync", path(name)) }
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(StorageError) {
        let temporary = ".\(name).new"
        remove(temporary)
        try create(temporary)
        do throws(StorageError) {
            try write(temporary, contents, at: 0)
            guard fsync(try descriptor(temporary)) == 0 else { throw Self.failure(errno, "cannot sync", path(temporary)) }
            guard rename(path(temporary), path(name)) == 0 else { throw Self.failure(errno, "cannot rename", path(name)) }
        } catch {
            remove(temporary)
            throw error
        }
        closeFile(name)
        if let fd = descriptors.removeValue(forKey: temporary) { descriptors[name] = fd }
        try syncFolder()
    }

    public func remove(_ name: String) {
        closeFile(name)
        unlink(path(name))
    }

    public func syncFolder() throws(StorageError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(errno, "cannot open", folder) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw Self.failure(errno, "cannot sync", folder) }
    }

    public func closeFile(_ name: String) {
        if let fd = descriptors.removeValue(forKey: name) { Glibc.close(fd) }
    }

    public func secondsSinceEpoch() -> UInt64 { UInt64(max(0, time(nil))) }

    /// The names in the folder that do not start with a dot (temporaries do).
    public func names() -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// When `name` was last modified, in seconds since 1970 (without following a symlink).
    public func modificationTime(_ name: String) -> UInt64? {
        entryStatus(name).map { UInt64(max(0, $0.st_mtim.tv_sec)) }
    }

    /// The status of the entry `name`, without following a symlink.
    private func entryStatus(_ name: String) -> stat? {
        var status = stat()
        return lstat(path(name), &status) == 0 ? status : nil
    }

    /// The open descriptor of `name`: a regular file of this user's, opened without following a
    /// symlink or blocking the first time it is used (read-only where it cannot be written).
    private func descriptor(_ name: String) throws(StorageError) -> Int32 {
        if let fd = descriptors[name] { return fd }
        var fd = open(path(name), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && (errno == EACCES || errno == EROFS) { fd = open(path(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw Self.failure(errno, "cannot open", path(name)) }
        _ = try ownRegularFile(fd, name: path(name))
        descriptors[name] = fd
        return fd
    }
}
