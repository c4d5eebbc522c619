#if canImport(Glibc)
import Glibc
#endif

/// The text of an `errno` value.
func systemMessage(_ code: Int32) -> String { String(cString: strerror(code)) }
