/// A problem with a key, a key file or a trust directory: what happened, and what to do.
public struct KeyError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The text is not a blesend key of the expected kind.
        case badEncoding
        /// The text looks right but its checksum does not match: a typo or a truncated copy.
        case badChecksum
        /// A secret key file others can read.
        case insecurePermissions
        /// The file could not be read or written.
        case io
        /// The file would be overwritten.
        case exists
        /// A file holds no key, or more than one.
        case wrongKeyCount
        /// The trust directory is missing or holds an unusable entry.
        case trustDirectory
        /// A trust directory, or a `.pub` file in it, that someone but its owner (us or root) may
        /// change: group- or world-writable, or owned by another user.
        case writableByOthers
        /// A name in a trust directory or address book is held by another key.
        case nameTaken
        /// The key is already in that directory, under another name.
        case keyTaken
        /// No entry of that name or fingerprint in a trust directory or address book.
        case unknownName
    }

    public var code: Code
    public var message: String
    public var hint: String?

    public init(_ code: Code, _ message: String, hint: String? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
    }

    public var description: String { message }
}
