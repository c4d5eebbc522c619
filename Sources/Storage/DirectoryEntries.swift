#if canImport(Glibc)
import Glibc
#endif

/// The names in the directory open at `directory`, without `.` and `..`, as raw bytes (a Linux
/// name need not be UTF-8). Reads through a descriptor of its own, so `directory` is left as it
/// was. `nil` when the directory cannot be read, with `errno` saying why.
func directoryEntryNames(_ directory: Int32) -> [[UInt8]]? {
    let fd = openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    guard let stream = fdopendir(fd) else {
        let code = errno
        close(fd)
        errno = code
        return nil
    }
    var names: [[UInt8]] = []
    var failure: Int32 = 0
    while true {
        errno = 0
        guard let entry = readdir(stream) else {
            failure = errno
            break
        }
        let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
        if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] {
            names.append(name)
        }
    }
    closedir(stream)  // closes fd too
    errno = failure  // for the caller's message
    return failure == 0 ? names : nil
}

/// Calls `body` with `name` as a NUL-terminated C string.
func withCName<Result>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
    let terminated = name.map { CChar(bitPattern: $0) } + [0]
    return terminated.withUnsafeBufferPointer { buffer in
        // Never nil: the buffer holds at least the terminating NUL.
        guard let start = buffer.baseAddress else { return body("") }
        return body(start)
    }
}
