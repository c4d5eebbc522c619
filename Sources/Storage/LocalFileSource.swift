#if canImport(Glibc)
import Glibc
#endif
import Durable
import Pipeline
import Transfer

/// An outgoing regular file, read with `pread` (so resuming is a seek, not a re-read).
public final class LocalFileSource: FileSource {
    public let name: String
    public let size: UInt64?
    /// The path it was opened by (for the history).
    public let path: String
    /// Device, inode, size and modification time: they change when the file is replaced or
    /// written, so a run again with the same bytes finds the same stamp (`OutgoingTransferIDs`).
    public let stamp: [UInt8]
    public var transferID: TransferID?
    private let fd: Int32

    /// Opens `path`; the offered name is its last path component unless `name` is given.
    public convenience init(path: String, name: String? = nil) throws(StorageError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError(.io, "cannot read \(path): \(systemMessage(errno))") }
        try self.init(opened: fd, name: name ?? String(path.split(separator: "/").last ?? Substring(path)), path: path)
    }

    /// Takes over `fd`, open for reading; closes it if it is not a regular file. `path` is for messages.
    init(opened fd: Int32, name: String, path: String) throws(StorageError) {
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw StorageError(.io, "\(path) is not a regular file")
        }
        self.fd = fd
        self.size = UInt64(status.st_size)
        self.name = name
        self.path = path
        self.stamp = fileStamp(status)
    }

    deinit { close(fd) }

    public func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var total = 0
        while total < count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + total, count - total, off_t(offset) + off_t(total)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw StorageError(.io, "cannot read \(name): \(systemMessage(errno))") }
            if n == 0 { break }
            total += n
        }
        buffer.removeLast(count - total)
        return buffer
    }
}

/// An outgoing stream (standard input): size unknown, read once. Bytes the receiver has not
/// acknowledged yet are kept (at most one transfer window), so a reconnect can resend them.
public final class StreamSource: FileSource {
    public let name: String
    public let size: UInt64? = nil
    private let fd: Int32
    /// Bytes from `bufferStart` on that were read but not yet released.
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private var ended = false

    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    public func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard offset >= bufferStart else { throw StorageError(.io, "stream position \(offset) was already released") }
        while !ended, offset + UInt64(count) > bufferStart + UInt64(buffer.count) {
            var chunk = [UInt8](repeating: 0, count: 16_384)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw StorageError(.io, "cannot read \(name): \(systemMessage(errno))") }
            if n == 0 { ended = true } else { buffer += chunk.prefix(n) }
        }
        let start = Int(offset - bufferStart)
        guard start < buffer.count else { return [] }
        return Array(buffer[start..<min(buffer.count, start + count)])
    }

    public func release(before offset: UInt64) {
        guard offset > bufferStart else { return }
        let drop = Int(min(offset - bufferStart, UInt64(buffer.count)))
        buffer.removeFirst(drop)
        bufferStart += UInt64(drop)
    }
}

/// What changes when a file is written or replaced: device, inode, size and modification time.
func fileStamp(_ status: stat) -> [UInt8] {
    var stamp: [UInt8] = []
    for field in [UInt64(status.st_dev), UInt64(status.st_ino), UInt64(status.st_size),
                  UInt64(bitPattern: Int64(status.st_mtim.tv_sec)), UInt64(status.st_mtim.tv_nsec)] {
        stamp.appendBigEndian(field)
    }
    return stamp
}
