#if canImport(Glibc)
import Glibc
#endif
import Durable
import Transfer
import Pipeline

/// A local folder to send, listed whole before anything is sent: folders (so that empty ones
/// arrive) and regular files, each folder followed by its contents, names sorted by their bytes.
///
/// The listing walks the folder through directory descriptors (`openat` with `O_NOFOLLOW`,
/// `fstatat` with `AT_SYMLINK_NOFOLLOW`), so it never leaves the folder. The folder named by
/// the user is opened like any path (a symlink to a folder is followed there); below it, symlinks,
/// devices, named pipes and sockets are skipped and listed in `skipped` with the reason, as is
/// anything unreadable or whose path the receiver would refuse. Nothing is cut to fit.
///
/// No file is held open: `openFile` opens one when it is about to be sent.
public struct LocalTree: Sendable {
    /// The folder as given.
    public let root: String
    /// What will be sent, in order.
    public let entries: [LocalTreeEntry]
    /// What will not, in the order met.
    public let skipped: [SkippedLocalEntry]

    /// Lists the folder at `root`. Throws only when `root` itself cannot be opened as a folder,
    /// or has no name to send it under (`/`).
    public init(listing root: String) throws(StorageError) {
        let top = try Self.topName(of: root)
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw StorageError(.io, code == ENOTDIR ? "\(root) is not a folder" : "cannot read \(root): \(systemMessage(code))")
        }
        defer { close(fd) }
        var walk = Walk()
        do {
            walk.visitFolder(fd, [top], wirePath: try RelativePath.wire(components: [top]))
        } catch {
            walk.skipped.append(SkippedLocalEntry(path: top, reason: .badPath(error)))
        }
        self.root = root
        self.entries = walk.entries
        self.skipped = walk.skipped
    }

    /// Opens the file of `entry` for sending: walked to from `root` again with `O_NOFOLLOW`, so a
    /// folder swapped for a symlink since the listing is refused, not followed. The source's
    /// `name` is the entry's path.
    public func openFile(_ entry: LocalTreeEntry) throws(StorageError) -> LocalFileSource {
        guard case .file = entry.kind, let name = entry.components.last else {
            throw StorageError(.io, "\(entry.path) is not a file")
        }
        var folder = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw StorageError(.io, "cannot read \(root): \(systemMessage(errno))") }
        for component in entry.components.dropFirst().dropLast() {
            let next = openat(folder, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            close(folder)
            guard next >= 0 else { throw StorageError(.io, "cannot read \(entry.path): \(systemMessage(code))") }
            folder = next
        }
        // O_NONBLOCK: should a named pipe have taken the file's place, opening it must not wait
        // for a writer (LocalFileSource then refuses it); it changes nothing for a regular file.
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let code = errno
        close(folder)
        guard fd >= 0 else { throw StorageError(.io, "cannot read \(entry.path): \(systemMessage(code))") }
        return try LocalFileSource(opened: fd, name: entry.path, path: entry.path)
    }

    /// The name the folder is sent under: its last path component, or for `.`, `..` and the like
    /// the last component of its real path.
    static func topName(of root: String) throws(StorageError) -> String {
        let last = root.split(separator: "/").last.map(String.init)
        if let last, last != ".", last != ".." { return last }
        guard let resolved = realpath(root, nil) else {
            throw StorageError(.io, "cannot read \(root): \(systemMessage(errno))")
        }
        defer { free(resolved) }
        guard let name = String(cString: resolved).split(separator: "/").last else {
            throw StorageError(.io, "\(root) has no name to send it under")
        }
        return String(name)
    }
}

/// The state of one listing: what is sent and what is skipped so far.
private struct Walk {
    var entries: [LocalTreeEntry] = []
    var skipped: [SkippedLocalEntry] = []

    /// Adds the folder open at `fd` (already checked, so its `wirePath` is valid), then its
    /// contents. A folder that cannot be listed is skipped rather than sent empty.
    mutating func visitFolder(_ fd: Int32, _ components: [String], wirePath: [UInt8]) {
        let path = components.joined(separator: "/")
        guard let names = directoryEntryNames(fd) else {
            skipped.append(SkippedLocalEntry(path: path, reason: .unreadable(errno: errno)))
            return
        }
        entries.append(LocalTreeEntry(components: components, wirePath: wirePath, kind: .folder))
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            visit(name, in: fd, below: components)
        }
    }

    private mutating func visit(_ name: [UInt8], in folder: Int32, below parent: [String]) {
        let shown = (parent + [String(decoding: name, as: UTF8.self)]).joined(separator: "/")
        func skip(_ reason: SkippedLocalEntry.Reason) { skipped.append(SkippedLocalEntry(path: shown, reason: reason)) }
        guard let text = String(validating: name, as: UTF8.self) else { return skip(.badPath(.notUTF8)) }
        var status = stat()
        guard withCName(name, { fstatat(folder, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            return skip(.unreadable(errno: errno))
        }
        let components = parent + [text]
        let kind = status.st_mode & S_IFMT
        switch kind {
        case S_IFLNK: return skip(.symlink)
        case S_IFCHR, S_IFBLK: return skip(.device)
        case S_IFIFO: return skip(.fifo)
        case S_IFSOCK: return skip(.socket)
        case S_IFDIR, S_IFREG: break
        default: return skip(.otherKind)
        }
        let wirePath: [UInt8]
        do { wirePath = try RelativePath.wire(components: components) } catch { return skip(.badPath(error)) }
        if kind == S_IFDIR {
            let child = openat(folder, text, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else { return skip(.unreadable(errno: errno)) }
            defer { close(child) }
            visitFolder(child, components, wirePath: wirePath)
        } else {
            guard faccessat(folder, text, R_OK, 0) == 0 else { return skip(.unreadable(errno: errno)) }
            let executable = status.st_mode & 0o111 != 0
            entries.append(LocalTreeEntry(components: components, wirePath: wirePath, kind: .file(size: UInt64(status.st_size), executable: executable),
                                          stamp: fileStamp(status)))
        }
    }
}
