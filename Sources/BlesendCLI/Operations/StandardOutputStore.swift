#if canImport(Glibc)
import Glibc
#endif
import Transfer
import Pipeline

/// `blerecv --stdout`: one incoming file goes to standard output as it arrives.
///
/// Every byte written was authenticated (records are AEAD-sealed), but the whole-file check can
/// only happen at the end, so a failed or truncated transfer is reported by the exit status.
final class StandardOutputStore: FileStore {
    private var used = false

    func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        guard !used else { throw StorageError(.exists, "--stdout takes one file per run") }
        used = true
        return StandardOutputFile()
    }
}

final class StandardOutputFile: IncomingFile {
    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw StorageError(.io, "cannot write to standard output: \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    func commit() throws -> String { "-" }
    func discard() {}
}
