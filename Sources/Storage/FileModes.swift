#if canImport(Glibc)
import Glibc
#endif

/// The modes stored entries get, from the receiver's umask: a file `0666 & ~umask`, a file the
/// sender marked executable and a folder `0777 & ~umask`. A receiver run with `umask 077` stores
/// 0600 files. Nothing else of the sender's mode is ever applied. A value, read once at start
/// (`current()`), so that a store is testable with any umask.
public struct FileModes: Sendable, Equatable {
    public let umask: mode_t

    public init(umask: mode_t) {
        self.umask = umask & 0o777
    }

    /// The process's umask, read with umask(2) (which can only read it by setting it, so it is set
    /// back at once). Call it at start, before any other thread creates files.
    public static func current() -> FileModes {
        let mask = Glibc.umask(0o077)
        Glibc.umask(mask)
        return FileModes(umask: mask)
    }

    public var file: mode_t { 0o666 & ~umask }
    public var executable: mode_t { 0o777 & ~umask }
    public var folder: mode_t { 0o777 & ~umask }
}
