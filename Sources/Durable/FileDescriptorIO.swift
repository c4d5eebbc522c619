#if canImport(Glibc)
import Glibc
#endif
import Pipeline

/// Writes all of `bytes` to `fd` at `offset`, retrying short writes and EINTR. `name` is for the
/// error message.
public func writeFully(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, name: String) throws(StorageError) {
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { buffer in
            pwrite(fd, buffer.baseAddress.map { $0 + done }, bytes.count - done, off_t(offset) + off_t(done))
        }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else {
            let code = errno
            throw StorageError(code == ENOSPC || code == EDQUOT ? .noSpace : .io, "cannot write \(name): \(systemMessage(code))")
        }
        done += n
    }
}

/// Up to `count` bytes of `fd` from `offset`, retrying short reads and EINTR; fewer only at its
/// end. `name` is for the error message.
public func readFully(_ fd: Int32, count: Int, at offset: UInt64, name: String) throws(StorageError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
        let n = bytes.withUnsafeMutableBytes { buffer in
            pread(fd, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
        }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { throw StorageError(.io, "cannot read \(name): \(systemMessage(errno))") }
        if n == 0 { break }
        done += n
    }
    return Array(bytes.prefix(done))
}

/// Checks that `fd` (opened without following a symlink) is a regular file of this user's;
/// closes it and throws otherwise. Returns its status.
public func ownRegularFile(_ fd: Int32, name: String) throws(StorageError) -> stat {
    var status = stat()
    guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_uid == geteuid() else {
        close(fd)
        throw StorageError(.io, "\(name) is not a file of this user's")
    }
    return status
}
