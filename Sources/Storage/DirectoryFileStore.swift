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

    /// Removes temporary files left by an earlier receiver that did not exit cleanly. Returns how many.
    @discardableResult
    public func removeStaleTemporaries() -> Int {
        guard let dir = opendir(directory) else { return 0 }
        defer { closedir(dir) }
        var removed = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("."), name.hasSuffix(Self.temporarySuffix), unlink(directory + "/" + name) == 0 {
                removed += 1
            }
        }
        return removed
    }

    public func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw StorageError(.io, "unsafe file name")
        }
        if let size {
            var fs = statvfs()
            if statvfs(directory, &fs) == 0 {
                let free = UInt64(fs.f_bavail) * UInt64(fs.f_frsize)
                if size > free {
                    throw StorageError(.noSpace, "\(name) needs \(size) bytes but \(directory) has \(free) free")
                }
            }
        }
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
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? name : Self.numbered(name, attempt)
            // link() fails with EEXIST instead of replacing: no file is ever overwritten.
            if link(temporary, directory + "/" + candidate) == 0 {
                unlink(temporary)
                return candidate
            }
            guard errno == EEXIST else {
                throw StorageError(.io, "cannot move \(name) into place: \(systemMessage(errno))")
            }
        }
        throw StorageError(.exists, "too many files named like \(name)")
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
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                throw StorageError(code == ENOSPC || code == EDQUOT ? .noSpace : .io, "cannot write \(name): \(systemMessage(code))")
            }
            done += n
        }
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
