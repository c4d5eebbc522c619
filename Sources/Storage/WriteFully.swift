#if canImport(Glibc)
import Glibc
#endif
import Transfer
import Pipeline

/// Writes all of `bytes` to `fd` at `offset`, retrying short writes and EINTR. `name` is for the
/// error message.
func writeFully(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, name: String) throws(StorageError) {
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
