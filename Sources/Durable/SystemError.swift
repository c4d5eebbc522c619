#if canImport(Glibc)
import Glibc
#endif

/// The text of an `errno` value.
public func systemMessage(_ code: Int32) -> String { String(cString: strerror(code)) }
