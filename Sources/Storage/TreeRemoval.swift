#if canImport(Glibc)
import Glibc
#endif

/// Folder levels `removeEntry` descends before it gives up. blesend's own staging folders are at
/// most `maxPathDepth` deep; anything deeper was not made by blesend and is left alone.
let maxRemovalDepth = 64

/// Removes `name` from the directory open at `parent`, as `rm -r` would, but without ever leaving
/// that directory: a file or symlink is unlinked (a symlink is never followed), a folder is opened
/// with `O_NOFOLLOW` relative to `parent`, emptied through its own descriptor, then removed with
/// `AT_REMOVEDIR`. A symlink swapped in for a folder half-way fails to open and is left. Returns
/// whether `name` is gone.
@discardableResult
func removeEntry(named name: [UInt8], in parent: Int32, depthLeft: Int = maxRemovalDepth) -> Bool {
    withCName(name) { cName in
        // unlinkat without AT_REMOVEDIR refuses a folder with EISDIR (Linux), so no stat is needed.
        if unlinkat(parent, cName, 0) == 0 || errno == ENOENT { return true }
        guard errno == EISDIR, depthLeft > 0 else { return false }
        let folder = openat(parent, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return false }
        defer { close(folder) }
        guard let children = directoryEntryNames(folder) else { return false }
        for child in children {
            removeEntry(named: child, in: folder, depthLeft: depthLeft - 1)
        }
        return unlinkat(parent, cName, AT_REMOVEDIR) == 0
    }
}

/// `removeEntry` for a path: its parent folder is opened (following symlinks, as any path
/// would), the last component is removed relative to it.
@discardableResult
func removeEntry(atPath path: String) -> Bool {
    var bytes = Array(path.utf8)
    while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
    let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
    let parentPath = slash.map { $0 == 0 ? [UInt8(ascii: "/")] : Array(bytes[..<$0]) } ?? [UInt8(ascii: ".")]
    let name = slash.map { Array(bytes[($0 + 1)...]) } ?? bytes
    guard !name.isEmpty else { return false }
    let parent = withCName(parentPath) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    guard parent >= 0 else { return false }
    defer { close(parent) }
    return removeEntry(named: name, in: parent)
}
