#if canImport(Glibc)
import Glibc
#endif

/// Reading a corpus from disk without Foundation (it would inflate the memory bench's baseline):
/// every regular file under a path, in name order, symbolic links not followed.
enum FileTree {
    /// The files under `path` (or `path` itself if it is a regular file), concatenated, and how
    /// many there were; nil if `path` cannot be read.
    static func concatenatedFiles(under path: String) -> (bytes: [UInt8], files: Int)? {
        var bytes: [UInt8] = [], files = 0
        guard walk(path, into: &bytes, files: &files) else { return nil }
        return (bytes, files)
    }

    private static func walk(_ path: String, into bytes: inout [UInt8], files: inout Int) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            guard let contents = read(path) else { return false }
            bytes += contents
            files += 1
            return true
        case S_IFDIR:
            guard let directory = opendir(path) else { return false }
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names.sorted() {
                guard walk(path + "/" + name, into: &bytes, files: &files) else { return false }
            }
            return true
        default:
            return true   // links, sockets, devices: not part of a corpus
        }
    }

    private static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return nil }
            if count == 0 { return contents }
            contents += buffer[..<count]
        }
    }
}
