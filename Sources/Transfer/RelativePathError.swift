/// Why a path inside a sent folder is refused (docs/protocol.md §8.4, Paths). The raw value is the stable
/// code that tests, logs and scripts match on; the description is for people.
public enum RelativePathError: String, Error, Equatable, Sendable, CustomStringConvertible {
    /// No bytes at all (or, on the sender's side, no components).
    case empty
    /// More than `maxPathLength` bytes.
    case tooLong
    /// Bytes that are not valid UTF-8.
    case notUTF8
    /// Starts with `/`.
    case absolute
    /// More than `maxPathDepth` components.
    case tooDeep
    /// An empty component: `a//b`, or a `/` at the end.
    case emptyComponent
    /// A component that is `.` or `..`.
    case dotComponent
    /// A component holding `\`, or on the sender's side a local name holding `/`.
    case separator
    /// A control character (U+0000–U+001F, U+007F–U+009F) anywhere in the path.
    case controlCharacter
    /// A component of more than `maxNameLength` bytes.
    case componentTooLong
    /// A component with nothing left after the name policy (only dots and white space).
    case unusableComponent

    public var code: String { rawValue }

    public var description: String {
        switch self {
        case .empty: "an empty path"
        case .tooLong: "a path over \(TransferConstants.maxPathLength) bytes"
        case .notUTF8: "a path that is not valid UTF-8"
        case .absolute: "an absolute path"
        case .tooDeep: "a path of more than \(TransferConstants.maxPathDepth) components"
        case .emptyComponent: "a path with an empty component"
        case .dotComponent: "a path with a . or .. component"
        case .separator: "a path with a separator inside a name"
        case .controlCharacter: "a path with a control character"
        case .componentTooLong: "a path with a name over \(TransferConstants.maxNameLength) bytes"
        case .unusableComponent: "a path with a name that is only dots and spaces"
        }
    }
}
