#if canImport(Glibc)
import Glibc
#endif
import Transfer

/// One file of an incoming folder (`DirectoryIncomingTree.beginFile`), created with `O_EXCL`
/// (mode 0600) in its folder inside the staging folder. `commit` finishes it where it is; the
/// folder as a whole becomes visible with the tree's `commit`.
final class TreeIncomingFile: IncomingFile {
    private let tree: DirectoryIncomingTree
    /// The folder the file is in, and the file (-1 once committed or discarded).
    private var parent: Int32
    private var fd: Int32
    private let name: String
    /// Relative to the top folder, for messages and as `commit`'s result.
    private let path: String
    /// The mode it gets at `commit` (`FileModes.file` or `.executable`).
    private let mode: mode_t

    init(tree: DirectoryIncomingTree, parent: Int32, fd: Int32, name: String, path: String, mode: mode_t) {
        self.tree = tree
        self.parent = parent
        self.fd = fd
        self.name = name
        self.path = path
        self.mode = mode
    }

    deinit { discard() }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        try writeFully(fd, bytes, at: offset, name: path)
    }

    /// Flushes the file and gives it its final mode; returns its path relative to the top folder.
    func commit() throws -> String {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        guard fsync(fd) == 0, fchmod(fd, mode) == 0 else {
            throw StorageError(.io, "cannot finish \(path): \(systemMessage(errno))")
        }
        close(fd)
        fd = -1
        close(parent)
        parent = -1
        tree.fileEnded()
        return path
    }

    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlinkat(parent, name, 0)
        close(parent)
        parent = -1
        tree.fileEnded()
    }
}
