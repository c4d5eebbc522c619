import Pipeline
/// Why the sender stopped reading a file it was sending: a code to match on, the file's name,
/// and, when the source itself refused, what it said (`cause`). Two errors are equal when their
/// codes are.
public struct FileSourceError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The source threw (`cause`: the file system's refusal).
        case unreadable
        /// The source returned more bytes than it was asked for.
        case readTooMuch
        /// A file of known size ended before its size: it became shorter while it was sent.
        case shrank
        /// The bytes hashed and the bytes sent disagree (a defect of the sender, never the file).
        case hashOutOfStep
    }

    public var code: Code
    /// The name the file is offered under.
    public var name: String
    /// What the source threw, for `unreadable`.
    public var cause: StorageError?

    public init(_ code: Code, name: String, cause: StorageError? = nil) {
        self.code = code
        self.name = name
        self.cause = cause
    }

    public static func == (lhs: FileSourceError, rhs: FileSourceError) -> Bool { lhs.code == rhs.code }

    /// The reason, for people.
    public var description: String {
        switch code {
        case .unreadable: cause?.detail ?? "cannot read \(name)"
        case .readTooMuch: "reading \(name) returned more than asked"
        case .shrank: "\(name) became shorter while it was being sent"
        case .hashOutOfStep: "the hash of \(name) is out of step with its bytes"
        }
    }
}
