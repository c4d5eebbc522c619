/// The most bytes a name in a folder may have (Linux's NAME_MAX).
public let maxNameBytes = 255

/// Whether `name` can be used as one component of a path in the output folder: not empty, not
/// `.` or `..`, no `/` and no NUL, at most `maxNameBytes` bytes. The transfer layer's name policy
/// already guarantees more; the storage edge, and what durable state reads back, check again
/// rather than trust their source.
public func isSafeComponent(_ name: String) -> Bool {
    !name.isEmpty && name != "." && name != ".." && name.utf8.count <= maxNameBytes
        && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
}
