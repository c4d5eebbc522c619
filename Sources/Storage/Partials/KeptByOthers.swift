#if canImport(Glibc)
import Glibc
#endif

extension DirectoryFileStore {
    /// How many partials (files and folders) are kept in this folder for a resume that
    /// `keptPartials`/`keptFolders` leave out: another receiver key's (another tag), or another
    /// user's (the service's, say). Counted by their checkpoint records' names, none read.
    public func keptByOthers(euid: uid_t = geteuid()) -> Int {
        (directoryEntryNames(directoryFD) ?? []).filter { name in
            guard TemporaryNames.isKeptRecord(name) else { return false }
            guard names.isOurs(name) else { return true }
            var status = stat()
            return withCName(name, { fstatat(directoryFD, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 && status.st_uid != euid
        }.count
    }
}
