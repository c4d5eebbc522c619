#if canImport(Glibc)
import Glibc
#endif

/// Reading the small system files `doctor` looks at (main.conf, /sys/class/rfkill), with a size cap.
enum SmallFile {
    enum Outcome: Equatable {
        case text(String)
        /// No such file.
        case absent
        /// There, but not readable: why.
        case failed(Problem)
    }

    /// Why a file that is there could not be read.
    enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// open(2) or read(2) failed with this errno.
        case system(errno: Int32)
        /// Larger than the cap, in KiB.
        case tooLarge(limitKiB: Int)

        var description: String {
            switch self {
            case .system(let errno): String(cString: strerror(errno))
            case .tooLarge(let limit): "larger than \(limit) KiB"
            }
        }
    }

    static func read(_ path: String, limit: Int) -> Outcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .absent : .failed(.system(errno: errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(.system(errno: errno))
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
            if bytes.count > limit { return .failed(.tooLarge(limitKiB: limit / 1024)) }
        }
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    /// The first line of a small file, spaces and newline removed; nil when it cannot be read.
    static func firstLine(_ path: String) -> String? {
        guard case .text(let text) = read(path, limit: 4096) else { return nil }
        return text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map {
            String($0.filter { $0 != " " && $0 != "\t" && $0 != "\r" })
        }
    }

    /// The names in `directory` without `.` and `..`; nil when it cannot be read.
    static func names(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
