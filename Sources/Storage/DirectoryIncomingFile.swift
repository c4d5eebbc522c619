#if canImport(Glibc)
import Glibc
#endif
import Durable
import Transfer
import Pipeline

/// One file of a `DirectoryFileStore` being received: open for writing, with no name in the
/// output folder (or, without `O_TMPFILE`, a hidden temporary name) until `commit`.
final class DirectoryIncomingFile: IncomingFile {
    private let store: DirectoryFileStore
    private var fd: Int32
    /// The hidden name and its interrupt registration, where the file has one.
    private let temporary: (name: String, token: OpenTemporaries.Token?)?
    private let name: String

    init(store: DirectoryFileStore, fd: Int32, temporary: (name: String, token: OpenTemporaries.Token?)?, name: String) {
        self.store = store
        self.fd = fd
        self.temporary = temporary
        self.name = name
    }

    deinit { discard() }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        try store.checkReserve(afterWriting: bytes.count, to: name)
        try writeFully(fd, bytes, at: offset, name: name)
    }

    func commit() throws -> String {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        // Data and mode first, then the name: after a crash there is either no file or the whole file.
        guard fchmod(fd, store.modes.file) == 0, fsync(fd) == 0 else {
            throw StorageError(.io, "cannot flush \(name): \(systemMessage(errno))")
        }
        defer {
            close(fd)
            fd = -1
            if let temporary { OpenTemporaries.shared.remove(temporary.token) }
        }
        do {
            return try store.place(fd, temporary: temporary?.name, as: name)
        } catch {
            if let temporary { unlinkat(store.directoryFD, temporary.name, 0) }
            throw error
        }
    }

    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        if let temporary {
            unlinkat(store.directoryFD, temporary.name, 0)
            OpenTemporaries.shared.remove(temporary.token)
        }
    }
}
