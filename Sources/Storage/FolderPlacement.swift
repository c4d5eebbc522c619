#if canImport(Glibc)
import Glibc
#endif
import CFileCalls
import Durable
import Transfer
import Pipeline

/// Moves the folder `from` to `to` (both in the directory open at `directory`) unless something
/// called `to` exists. Returns `false` when `to` is taken, so the caller can try another name.
///
/// `renameat2(RENAME_NOREPLACE)` does this atomically. Where the file system refuses the flag
/// (EINVAL; ENOSYS on kernels before 3.15), `to` is claimed by creating an empty folder there
/// (`mkdirat` fails if anything has the name), and the rename then replaces that empty folder,
/// the one thing `rename` may replace: a folder that is no longer empty, or no longer a folder,
/// makes it fail, so even then nothing but our own placeholder is ever replaced. The price is an
/// empty folder visible under `to` for the moment between the two calls.
///
/// `renameNoReplace` is `renameat2` with `RENAME_NOREPLACE`; tests hand in one that fails with
/// EINVAL to run the fallback.
func moveFolderWithoutReplacing(
    _ from: String, to: String, in directory: Int32,
    renameNoReplace: (Int32, String, Int32, String) -> Int32 = { blesend_renameat_noreplace($0, $1, $2, $3) }
) throws(StorageError) -> Bool {
    if renameNoReplace(directory, from, directory, to) == 0 { return true }
    switch errno {
    case EEXIST:
        return false
    case EINVAL, ENOSYS:
        break
    case let code:
        throw StorageError(.io, "cannot move a folder into place as \(to): \(systemMessage(code))")
    }
    guard mkdirat(directory, to, 0o700) == 0 else {
        let code = errno
        if code == EEXIST { return false }
        throw StorageError(.io, "cannot move a folder into place as \(to): \(systemMessage(code))")
    }
    if renameat(directory, from, directory, to) == 0 { return true }
    let code = errno
    // Removes the placeholder only while it is still an empty folder: never anyone else's.
    unlinkat(directory, to, AT_REMOVEDIR)
    if code == ENOTEMPTY || code == EEXIST || code == ENOTDIR { return false }
    throw StorageError(.io, "cannot move a folder into place as \(to): \(systemMessage(code))")
}
