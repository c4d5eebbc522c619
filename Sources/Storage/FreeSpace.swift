#if canImport(Glibc)
import Glibc
#endif
import Transfer
import Pipeline

/// How much of a file system a receiver leaves free: files that would eat into it are refused at
/// their offer, and a file (a stream above all, whose size nobody knew) that eats into it while
/// it arrives is stopped there. `bytes` nil: the default, 5 % of the file system, at most 1 GiB.
public struct DiskReserve: Sendable, Equatable {
    public let bytes: UInt64?

    public init(bytes: UInt64? = nil) { self.bytes = bytes }

    public static let defaultFraction: UInt64 = 20   // 1/20: 5 %
    public static let defaultCap: UInt64 = 1 << 30

    /// The bytes to keep free on a file system of `total` bytes.
    func keep(ofTotal total: UInt64) -> UInt64 {
        bytes ?? min(Self.defaultCap, total / Self.defaultFraction)
    }
}

/// Refuses up front a file of `size` bytes that the file system cannot hold with `reserve` left
/// free, so a receiver says "no space" at the offer rather than part-way through. `query` fills
/// in the file system's status (`statvfs` or `fstatvfs`); when it fails the file is let in.
/// `size` nil (a stream): only the reserve itself must be free.
func checkFreeSpace(
    _ size: UInt64?, for name: String, in place: String, reserve: DiskReserve = DiskReserve(bytes: 0),
    query: (UnsafeMutablePointer<statvfs>) -> Int32
) throws(StorageError) {
    var status = statvfs()
    guard query(&status) == 0 else { return }
    let free = UInt64(status.f_bavail) * UInt64(status.f_frsize)
    let kept = reserve.keep(ofTotal: UInt64(status.f_blocks) * UInt64(status.f_frsize))
    let needed = (size ?? 0).addingReportingOverflow(kept)
    if needed.overflow || needed.partialValue > free {
        guard let size else {
            throw StorageError(.noSpace, "\(place) is down to \(free) bytes free and keeps \(kept) free (--reserve): \(name) stopped there")
        }
        if kept == 0 {
            throw StorageError(.noSpace, "\(name) needs \(size) bytes but \(place) has \(free) free")
        }
        throw StorageError(.noSpace, "\(name) needs \(size) bytes and \(place) keeps \(kept) bytes free (--reserve) of its \(free)")
    }
}
