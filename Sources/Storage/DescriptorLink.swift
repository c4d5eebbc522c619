#if canImport(Glibc)
import Glibc
#endif
import CFileCalls

/// Gives the open file `fd` (made with `O_TMPFILE`, so it has no name yet) the name `name` in the
/// directory open at `directory`; fails with EEXIST rather than replace anything. Returns 0, or
/// -1 with `errno` set.
///
/// `linkat(fd, "", …, AT_EMPTY_PATH)` needs CAP_DAC_READ_SEARCH on most kernels and fails with
/// ENOENT (or EPERM) without it; then the documented unprivileged way,
/// `linkat(AT_FDCWD, "/proc/self/fd/N", …, AT_SYMLINK_FOLLOW)`, links the same open file. Both
/// name the file by its descriptor, never by a path someone else could swap. `emptyPath` is the
/// first call; tests hand in one that fails to run the second.
func linkDescriptor(
    _ fd: Int32, into directory: Int32, as name: String,
    emptyPath: (Int32, Int32, String) -> Int32 = { blesend_link_descriptor($0, $1, $2) }
) -> Int32 {
    if emptyPath(fd, directory, name) == 0 { return 0 }
    let code = errno
    guard code == ENOENT || code == EPERM else { return -1 }
    return linkat(AT_FDCWD, "/proc/self/fd/\(fd)", directory, name, AT_SYMLINK_FOLLOW)
}

/// Whether the entry `name` in the directory open at `directory` is the file open at `fd` (same
/// device and inode; a symlink is not followed).
func entry(_ name: String, in directory: Int32, isFile fd: Int32) -> Bool {
    var open = stat(), named = stat()
    guard fstat(fd, &open) == 0, fstatat(directory, name, &named, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
    return open.st_dev == named.st_dev && open.st_ino == named.st_ino
}
