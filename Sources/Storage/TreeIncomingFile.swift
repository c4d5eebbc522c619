#if canImport(Glibc)
import Glibc
#endif
import Durable
import Transfer
import Pipeline

/// One file of an incoming folder (`DirectoryIncomingTree.beginFile`), created with `O_EXCL`
/// (mode 0600) in its folder inside the staging folder. `commit` finishes it where it is; the
/// folder as a whole becomes visible with the tree's `commit`.
///
/// In a folder kept across runs, a checkpoint syncs the data and the folder entry, then records
/// them in the tree's journal; so does `commit`, and `closeForResume` leaves the file for the next
/// run (`TreeRecovery` takes it up from its last checkpoint).
final class TreeIncomingFile: IncomingFile {
    private let tree: DirectoryIncomingTree
    /// The folder the file is in, and the file (-1 once committed, discarded or closed).
    private var parent: Int32
    private var fd: Int32
    /// The `entry`'s transfer id, and the path below the top folder.
    private let id: TransferID
    private let components: [String]
    private let executable: Bool

    init(tree: DirectoryIncomingTree, parent: Int32, fd: Int32, id: TransferID, components: [String], executable: Bool) {
        self.tree = tree
        self.parent = parent
        self.fd = fd
        self.id = id
        self.components = components
        self.executable = executable
    }

    deinit { discard() }

    /// Relative to the top folder, for messages and as `commit`'s result.
    private var path: String { DirectoryIncomingTree.text(components) }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        try tree.checkReserve(afterWriting: bytes.count, to: path)
        try writeFully(fd, bytes, at: offset, name: path)
    }

    func checkpoint(_ checkpoint: PartialCheckpoint) throws {
        guard tree.keepsAcrossRuns else { return }
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        guard fdatasync(fd) == 0 else { throw StorageError(.io, "cannot sync \(path): \(systemMessage(errno))") }
        try tree.settle(.checkpoint(id: id, path: components, size: checkpoint.size, executable: executable,
                                    durable: checkpoint.durable, prefixHash: checkpoint.prefixHash), entryIn: parent, path)
    }

    /// Flushes the file and gives it its final mode; returns its path relative to the top folder.
    func commit() throws -> String {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        guard fsync(fd) == 0, fchmod(fd, tree.fileMode(executable: executable)) == 0 else {
            throw StorageError(.io, "cannot finish \(path): \(systemMessage(errno))")
        }
        if tree.keepsAcrossRuns {
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw StorageError(.io, "cannot finish \(path): \(systemMessage(errno))") }
            try tree.settle(.file(id: id, path: components, size: UInt64(status.st_size)), entryIn: parent, path)
        }
        end()
        return path
    }

    func closeForResume() {
        guard tree.keepsAcrossRuns else { return discard() }
        guard fd >= 0 else { return }
        end()
    }

    func discard() {
        guard fd >= 0 else { return }
        unlinkat(parent, components.last ?? "", 0)
        end()
    }

    private func end() {
        close(fd)
        fd = -1
        close(parent)
        parent = -1
        tree.fileEnded()
    }
}
