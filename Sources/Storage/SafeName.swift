/// Whether `name` can be used as one component of a path in the output folder: not empty, not
/// `.` or `..`, no `/` and no NUL, at most `maxNameBytes` bytes. The transfer layer's name policy
/// already guarantees more; the storage edge checks again rather than trust its caller.
func isSafeComponent(_ name: String) -> Bool {
    !name.isEmpty && name != "." && name != ".." && name.utf8.count <= DirectoryFileStore.maxNameBytes
        && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
}
