#if canImport(Glibc)
import Glibc
#endif
import Transfer

/// Stores incoming files in a directory.
///
/// Each file is written to a hidden temporary file in the same directory (`.NAME.XXXXXX.blesend-part`,
/// mode 0600) and moved into place only by `commit`, which never replaces an existing file unless
/// `overwrite` is set: a taken name gets a number (`report-1.pdf`). Leftovers of a receiver that
/// was killed are removed by `removeStaleTemporaries()`.
public final class DirectoryFileStore: FileStore {
    public static let temporarySuffix = ".blesend-part"

    public let directory: String
    public let overwrite: Bool

    public init(directory: String, overwrite: Bool = false) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.overwrite = overwrite
    }

    /// Checks that the directory exists and is writable, so a receiver fails at start, not mid-file.
    public func checkWritable() throws(StorageError) {
        var status = stat()
        guard stat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw StorageError(.notWritable, "\(directory) is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw StorageError(.notWritable, "\(directory) is not writable: \(systemMessage(errno))")
        }
    }

    /// Removes temporary files and staging folders (`DirectoryIncomingTree`) left by an earlier
    /// receiver that did not exit cleanly. Folders are removed recursively without following
    /// symlinks (`removeEntry`). Returns how many were removed.
    @discardableResult
    public func removeStaleTemporaries() -> Int {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let prefix = Array(".".utf8), suffix = Array(Self.temporarySuffix.utf8)
        var removed = 0
        for name in directoryEntryNames(fd) ?? [] where name.starts(with: prefix) && name.reversed().starts(with: suffix.reversed()) {
            if removeEntry(named: name, in: fd) { removed += 1 }
        }
        return removed
    }

    public func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        guard isSafeComponent(name) else { throw StorageError(.io, "unsafe file name") }
        try checkFreeSpace(size, for: name, in: directory) { statvfs(directory, $0) }
        // Keep the temporary name short enough for any file system, whatever the final name.
        let stem = String(decoding: Array(name.utf8.prefix(100)), as: UTF8.self)
        var template = Array("\(directory)/.\(stem).XXXXXX\(Self.temporarySuffix)".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(Self.temporarySuffix.utf8.count)) }
        guard fd >= 0 else {
            let code = errno
            throw StorageError(code == ENOSPC ? .noSpace : .notWritable, "cannot create a file in \(directory): \(systemMessage(code))")
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        OpenTemporaries.shared.insert(temporary)
        return DirectoryIncomingFile(store: self, fd: fd, temporaryPath: temporary, name: name)
    }

    /// Moves `temporary` into place as `name` or a numbered variant; returns the name used.
    fileprivate func place(_ temporary: String, as name: String) throws(StorageError) -> String {
        if overwrite {
            guard rename(temporary, directory + "/" + name) == 0 else {
                throw StorageError(.io, "cannot rename into \(name): \(systemMessage(errno))")
            }
            return name
        }
        return try Self.firstFreeName(for: name) { candidate throws(StorageError) in
            // link() fails with EEXIST instead of replacing: no file is ever overwritten.
            if link(temporary, directory + "/" + candidate) == 0 {
                unlink(temporary)
                return true
            }
            guard errno == EEXIST else {
                throw StorageError(.io, "cannot move \(name) into place: \(systemMessage(errno))")
            }
            return false
        }
    }

    /// Highest number a taken name gets (`report-9999.pdf`) before storing fails with `exists`.
    static let maxNumber = 9_999

    /// Offers `name`, then `name-1`, `name-2`, … (`numbered`) to `place`, which returns `false`
    /// when that name is taken; returns the first name `place` accepted.
    static func firstFreeName(
        for name: String, _ place: (String) throws(StorageError) -> Bool
    ) throws(StorageError) -> String {
        for attempt in 0...maxNumber {
            let candidate = attempt == 0 ? name : numbered(name, attempt)
            if try place(candidate) { return candidate }
        }
        throw StorageError(.exists, "too many entries named like \(name)")
    }

    /// Longest file name most Linux file systems take (NAME_MAX), in bytes.
    static let maxNameBytes = 255

    /// `report.pdf` → `report-1.pdf`; `archive` → `archive-1`. The stem is shortened (at a
    /// character boundary) so the result stays within `maxNameBytes`.
    static func numbered(_ name: String, _ n: Int) -> String {
        let suffix = "-\(n)"
        var stem = Substring(name), ext = Substring("")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            stem = name[..<dot]
            ext = name[dot...]
        }
        if stem.utf8.count + suffix.utf8.count + ext.utf8.count > maxNameBytes {
            // An extension too long to keep is treated as part of the stem.
            if ext.utf8.count + suffix.utf8.count >= maxNameBytes / 2 {
                stem = Substring(name)
                ext = ""
            }
            while stem.utf8.count + suffix.utf8.count + ext.utf8.count > maxNameBytes { stem.removeLast() }
        }
        return "\(stem)\(suffix)\(ext)"
    }
}

final class DirectoryIncomingFile: IncomingFile {
    private let store: DirectoryFileStore
    private var fd: Int32
    private let temporaryPath: String
    private let name: String

    init(store: DirectoryFileStore, fd: Int32, temporaryPath: String, name: String) {
        self.store = store
        self.fd = fd
        self.temporaryPath = temporaryPath
        self.name = name
    }

    deinit { discard() }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        try writeFully(fd, bytes, at: offset, name: name)
    }

    func commit() throws -> String {
        guard fd >= 0 else { throw StorageError(.io, "file already closed") }
        // Data first, then the name: after a crash there is either no file or the whole file.
        guard fsync(fd) == 0 else { throw StorageError(.io, "cannot flush \(name): \(systemMessage(errno))") }
        fchmod(fd, 0o644)
        close(fd)
        fd = -1
        defer { OpenTemporaries.shared.remove(temporaryPath) }
        do {
            return try store.place(temporaryPath, as: name)
        } catch {
            unlink(temporaryPath)
            throw error
        }
    }

    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
            unlink(temporaryPath)
            OpenTemporaries.shared.remove(temporaryPath)
        }
    }
}
