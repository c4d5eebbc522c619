#if canImport(Glibc)
import Glibc
#endif
import Durable
import Pipeline
import Transfer

/// The output folder as a `PartialFolder`: every step by name relative to the folder's
/// descriptor, never following a symlink, on files this user owns. A partial's descriptor is
/// opened when first used and kept until it is closed, committed or removed.
extension DirectoryFileStore: PartialFolder {
    public func exists(_ name: String) -> Bool { entryStatus(name) != nil }

    public func create(_ name: String) throws(StorageError) {
        let fd = openat(directoryFD, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw StorageError(.exists, "\(name) exists") }
            throw Self.creationError(errno, directory)
        }
        var status = stat()
        let identity = fstat(fd, &status) == 0 ? FileIdentity(status) : nil
        partialHandles.withLock { handles in
            handles.descriptors[name] = fd
            if let identity { handles.identities[name] = identity }
        }
    }

    public func write(_ name: String, _ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        try checkReserve(afterWriting: bytes.count, to: "a file")
        try writeFully(try descriptor(name), bytes, at: offset, name: name)
    }

    public func read(_ name: String, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try readFully(try descriptor(name), count: count, at: offset, name: name)
    }

    public func length(_ name: String) throws(StorageError) -> UInt64 {
        var status = stat()
        guard fstat(try descriptor(name), &status) == 0 else { throw StorageError(.io, "cannot stat \(name): \(systemMessage(errno))") }
        return UInt64(status.st_size)
    }

    public func truncate(_ name: String, to length: UInt64) throws(StorageError) {
        guard ftruncate(try descriptor(name), off_t(length)) == 0 else {
            throw StorageError(.io, "cannot cut \(name): \(systemMessage(errno))")
        }
    }

    public func sync(_ name: String) throws(StorageError) {
        guard fdatasync(try descriptor(name)) == 0 else { throw StorageError(.io, "cannot sync \(name): \(systemMessage(errno))") }
    }

    public func replace(_ name: String, with contents: [UInt8]) throws(StorageError) {
        let next = String(name.dropLast(TemporaryNames.recordSuffix.utf8.count)) + TemporaryNames.newRecordSuffix
        unlinkat(directoryFD, next, 0)
        let fd = openat(directoryFD, next, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.creationError(errno, directory) }
        do throws(StorageError) {
            defer { close(fd) }
            try writeFully(fd, contents, at: 0, name: next)
            guard fsync(fd) == 0 else { throw StorageError(.io, "cannot sync \(next): \(systemMessage(errno))") }
            guard renameat(directoryFD, next, directoryFD, name) == 0 else {
                throw StorageError(.io, "cannot rename \(next): \(systemMessage(errno))")
            }
        } catch {
            // A disk full (or any failure) leaves no half-written record behind.
            unlinkat(directoryFD, next, 0)
            throw error
        }
        // A descriptor kept for the old file under that name would read what it replaced; the
        // name now stands for the new file.
        closeFile(name, forgetting: true)
        try syncFolder()
    }

    public func remove(_ name: String) {
        closeFile(name, forgetting: true)
        removeEntry(named: Array(name.utf8), in: directoryFD)
    }

    public func syncFolder() throws(StorageError) {
        guard fsync(directoryFD) == 0 else { throw StorageError(.io, "cannot sync \(directory): \(systemMessage(errno))") }
    }

    public func commit(_ name: String, as finalName: String) throws(StorageError) -> String {
        let fd = try descriptor(name)
        defer { closeFile(name, forgetting: true) }
        guard fchmod(fd, modes.file) == 0, fsync(fd) == 0 else {
            throw StorageError(.io, "cannot flush \(finalName): \(systemMessage(errno))")
        }
        return try place(fd, temporary: name, as: finalName)
    }

    public func closeFile(_ name: String) { closeFile(name, forgetting: false) }

    /// Closes `name`'s descriptor; `forgetting`: the name no longer stands for its file either.
    private func closeFile(_ name: String, forgetting: Bool) {
        let fd = partialHandles.withLock { handles in
            if forgetting { handles.identities[name] = nil }
            return handles.descriptors.removeValue(forKey: name)
        }
        if let fd { Glibc.close(fd) }
    }

    public func ownNames() -> [String] {
        let euid = geteuid()
        return (directoryEntryNames(directoryFD) ?? []).compactMap { name in
            var status = stat()
            guard names.isOurs(name), withCName(name, { fstatat(directoryFD, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0,
                  status.st_uid == euid else { return nil }
            return String(validating: name, as: UTF8.self)
        }
    }

    public func secondsSinceEpoch() -> UInt64 { UInt64(max(0, time(nil))) }

    public func modificationTime(_ name: String) -> UInt64? {
        entryStatus(name).map { UInt64(max(0, $0.st_mtim.tv_sec)) }
    }

    /// The status of the entry `name` in the folder, without following a symlink.
    private func entryStatus(_ name: String) -> stat? {
        var status = stat()
        return withCName(Array(name.utf8), { fstatat(directoryFD, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 ? status : nil
    }

    /// The open descriptor of `name`: a regular file of this user's, opened without following a
    /// symlink the first time it is used.
    private func descriptor(_ name: String) throws(StorageError) -> Int32 {
        if let fd = partialHandles.withLock({ $0.descriptors[name] }) { return fd }
        let fd = openat(directoryFD, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError(.io, "cannot open \(name): \(systemMessage(errno))") }
        let status = try ownRegularFile(fd, name: name)
        let identity = FileIdentity(status)
        // One name is one connection's file, reached by one thread at a time; the lock keeps the
        // tables whole for the other names.
        let kept = partialHandles.withLock { handles -> Int32? in
            if let known = handles.identities[name], known != identity { return nil }
            if let open = handles.descriptors[name] { return open }
            handles.identities[name] = identity
            handles.descriptors[name] = fd
            return fd
        }
        guard let kept else {
            Glibc.close(fd)
            throw StorageError(.io, "\(name) in \(directory) was replaced by another file since it was first opened; nothing of it is used")
        }
        if kept != fd { Glibc.close(fd) }
        return kept
    }
}

/// Which file a name stood for: its device and inode.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
