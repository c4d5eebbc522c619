#if canImport(Glibc)
import Glibc
#endif

/// Whether a trust directory, or a key file in it, can be changed only by someone this process
/// already has to trust: it must be owned by us or by root, and neither its group nor others may
/// write it. Whoever can write a trust directory can make the receiver accept their key, so a
/// directory or `.pub` file that anybody else can write is refused rather than read.
///
/// Returns `nil` when `status` passes, or what is wrong, for the error message.
func ownerOnlyWritableProblem(_ status: stat, euid: uid_t = geteuid()) -> String? {
    let mode = status.st_mode & 0o7777
    if mode & 0o022 != 0 {
        let who = mode & 0o002 != 0 ? "everyone" : "its group"
        return "\(who) can write it (mode \(String(mode, radix: 8)))"
    }
    if status.st_uid != euid && status.st_uid != 0 {
        return "it belongs to another user (uid \(status.st_uid)), who can change it"
    }
    return nil
}
