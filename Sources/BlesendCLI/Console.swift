#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to standard output and standard error (no shared C `FILE*` state).
enum Console {
    static func out(_ text: String) { write(fd: 1, text) }
    static func err(_ text: String) { write(fd: 2, text) }

    static func write(fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }
}
