import CZstd

/// libzstd's calling conventions in one place: most functions return a `size_t` that is either a
/// size or an error code, told apart by `ZSTD_isError`.
public enum LibZstd {
    /// The version of the libzstd this process runs with ("1.5.4").
    public static var version: String { String(cString: ZSTD_versionString()) }

    static func isError(_ result: Int) -> Bool { ZSTD_isError(result) != 0 }

    static func errorCode(_ result: Int) -> ZSTD_ErrorCode { ZSTD_getErrorCode(result) }

    /// Checks the result of a call whose arguments the programmer chose (parameters, contexts):
    /// libzstd refusing one is a bug in this module, not something input can cause.
    static func require(_ result: Int, _ what: String) {
        precondition(!isError(result), "libzstd refused the \(what)")
    }
}
