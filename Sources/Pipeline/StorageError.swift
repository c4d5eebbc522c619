/// Why a file could not be stored or read, as the storage edge reports it: a code to match on
/// and a reason for people (what the file system said, with the path). Like swift-certificates'
/// `CertificateError`, two errors are equal when their codes are: tests and callers decide on
/// `code`, never on the text.
public struct StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// Larger than this store takes.
        case tooLarge
        /// The disk (or the quota) is full.
        case noSpace
        /// The folder cannot be written (permissions, a read-only file system).
        case notWritable
        /// The name or path is already taken.
        case exists
        /// Anything else the file system refused.
        case io
    }

    public var code: Code
    /// The reason, for people.
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `error` as a storage error: itself if it is one, else an `io` error that describes it.
    /// The storage protocols (`FileStore`, `IncomingFile`, `FileSource`, …) throw `StorageError`;
    /// only a stand-in from outside may throw anything else.
    public init(adapting error: any Error) {
        if let error = error as? StorageError {
            self = error
        } else {
            self.init(.io, String(describing: error))
        }
    }

    public static func == (lhs: StorageError, rhs: StorageError) -> Bool { lhs.code == rhs.code }

    public var description: String { detail }
}
