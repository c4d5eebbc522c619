#if canImport(Glibc)
import Glibc
#endif
import Transfer

/// Refuses up front a file of `size` bytes that the file system cannot hold, so a receiver says
/// "no space" at the offer rather than part-way through. `query` fills in the file system's
/// status (`statvfs` or `fstatvfs`); when it fails, or the size is unknown, the file is let in.
func checkFreeSpace(
    _ size: UInt64?, for name: String, in place: String, query: (UnsafeMutablePointer<statvfs>) -> Int32
) throws(StorageError) {
    guard let size else { return }
    var status = statvfs()
    guard query(&status) == 0 else { return }
    let free = UInt64(status.f_bavail) * UInt64(status.f_frsize)
    if size > free {
        throw StorageError(.noSpace, "\(name) needs \(size) bytes but \(place) has \(free) free")
    }
}
