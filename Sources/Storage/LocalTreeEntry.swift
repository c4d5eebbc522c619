import Durable
import Transfer

/// One thing of a local folder that will be sent (`LocalTree`).
public struct LocalTreeEntry: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Sent so that empty folders arrive too; its contents follow it.
        case folder
        /// A regular file; `executable` when any of its x bits is set.
        case file(size: UInt64, executable: Bool)
    }

    /// The local names from the top folder down, the top folder's own name first.
    public let components: [String]
    /// `components` as they travel (`RelativePath.wire`): checked, so the receiver accepts them.
    public let wirePath: [UInt8]
    public let kind: Kind
    /// A file's `fileStamp` at the listing (device, inode, size, modification time); empty for a folder.
    public var stamp: [UInt8] = []

    /// `components` joined with `/`, for messages.
    public var path: String { components.joined(separator: "/") }
}

/// One thing of a local folder that will not be sent, and why: for the command line to print.
public struct SkippedLocalEntry: Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// Symlinks are never followed nor sent: following one could send what lies outside the
        /// folder (or loop), and the receiver stores only folders and regular files.
        case symlink
        case device
        case fifo
        case socket
        /// A folder or file that could not be listed, examined or read: the system's `errno`.
        case unreadable(errno: Int32)
        /// Neither a folder nor a regular file, nor any of the kinds above.
        case otherKind
        /// Its path breaks a rule of docs/protocol.md §8.4, Paths (too long, too deep, not UTF-8, …).
        /// A folder skipped this way is skipped with everything in it.
        case badPath(RelativePathError)
    }

    /// Relative to the folder's parent, like `LocalTreeEntry.path`; bytes that are not UTF-8
    /// shown as U+FFFD.
    public let path: String
    public let reason: Reason

    /// A stable name for the reason (`symlink`, `unreadable`, `badPath.tooDeep`, …).
    public var code: String {
        switch reason {
        case .symlink: "symlink"
        case .device: "device"
        case .fifo: "fifo"
        case .socket: "socket"
        case .unreadable: "unreadable"
        case .otherKind: "otherKind"
        case .badPath(let error): "badPath." + error.code
        }
    }

    public var description: String {
        switch reason {
        case .symlink: "\(path): a symbolic link, not followed"
        case .device: "\(path): a device"
        case .fifo: "\(path): a named pipe"
        case .socket: "\(path): a socket"
        case .unreadable(let code): "\(path): cannot be read: \(systemMessage(code))"
        case .otherKind: "\(path): cannot be read: not a folder nor a regular file"
        case .badPath(let error): "\(path): \(error)"
        }
    }
}
