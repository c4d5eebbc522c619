/// Why an output folder is refused before anything is received into it.
public struct OutputFolderError: Error, Equatable, Sendable {
    public enum Code: Sendable, Equatable {
        /// Other users may rename, remove or add entries in it (`OutputFolderPermissions`).
        case writableByOthers
    }

    public var code: Code
    public var path: String
    /// The folder's permission bits (with the sticky bit), for the message.
    public var mode: UInt32
    public var detail: String

    public init(_ code: Code, path: String, mode: UInt32, _ detail: String) {
        self.code = code
        self.path = path
        self.mode = mode
        self.detail = detail
    }
}
