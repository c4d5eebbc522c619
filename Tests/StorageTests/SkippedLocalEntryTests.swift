#if canImport(Glibc)
import Glibc
#endif
@testable import Storage
import Testing

@Test func aSkippedEntryKeepsTheSystemsErrorAndSaysItInWords() {
    let denied = SkippedLocalEntry(path: "top/private", reason: .unreadable(errno: EACCES))
    #expect(denied.code == "unreadable")
    #expect(denied.description == "top/private: cannot be read: Permission denied")
    #expect(denied == SkippedLocalEntry(path: "top/private", reason: .unreadable(errno: EACCES)))
    #expect(denied != SkippedLocalEntry(path: "top/private", reason: .unreadable(errno: EIO)))
    let odd = SkippedLocalEntry(path: "top/door", reason: .otherKind)
    #expect(odd.code == "otherKind")
    #expect(odd.description == "top/door: cannot be read: not a folder nor a regular file")
}
