#if canImport(Glibc)
import Glibc
#endif

/// The rule for a folder blerecv writes into (the output folder, the state folder): refused when
/// other users could tamper with what blerecv puts there.
///
/// - world-writable without the sticky bit: anyone may rename or remove our entries;
/// - group- or world-writable (sticky or not) and owned by another user: someone else decides who
///   may write it.
///
/// Accepted: a folder only its owner may write; one of our own that our group may write (with
/// user private groups, the default on many systems, the group is us alone); a sticky
/// world-writable folder of our own (as root, /tmp), where nobody may rename or remove what
/// another user made. ACLs are not looked at. Returns what is wrong, or `nil`.
public func folderWriteProblem(_ status: stat, euid: uid_t) -> String? {
    let mode = status.st_mode & 0o7777
    let sticky = mode & 0o1000 != 0
    if mode & 0o002 != 0 && !sticky {
        return "everyone may write it (mode \(String(mode, radix: 8))), so anyone could rename or replace what blerecv stores there"
    }
    if mode & 0o022 != 0 && status.st_uid != euid {
        let who = mode & 0o002 != 0 ? "everyone" : "its group"
        return "it belongs to another user (uid \(status.st_uid)) and \(who) may write it (mode \(String(mode, radix: 8)))"
    }
    return nil
}
