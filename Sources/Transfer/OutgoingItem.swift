/// One thing a sender sends, in order: a single file, or a part of a sent folder (extension
/// `folders`, docs/protocol.md §8.4): the folder's folders (its top folder first, which opens it),
/// its files, and its commit after everything in it.
public enum OutgoingItem {
    /// A single file, offered under its base name.
    case file(any FileSource)
    /// A folder of the tree `tree`; `path` as it travels (`RelativePath.wire`), the top folder first.
    case folder(tree: TransferID, path: [UInt8])
    /// A file of the tree `tree`: `path` as it travels; the source's name is the path for people.
    case treeFile(tree: TransferID, path: [UInt8], executable: Bool, source: any FileSource)
    /// The end of the tree `tree`, called `name`: the receiver moves it into place.
    case commit(tree: TransferID, name: String)

    /// What carries file bytes, if this item has any.
    public var source: (any FileSource)? {
        switch self {
        case .file(let source), .treeFile(_, _, _, let source): source
        case .folder, .commit: nil
        }
    }

    /// The tree this item belongs to, if any.
    public var tree: TransferID? {
        switch self {
        case .file: nil
        case .folder(let tree, _), .treeFile(let tree, _, _, _), .commit(let tree, _): tree
        }
    }

    /// A folder entry with a one-component path: the one that opens its tree.
    public var opensTree: Bool {
        if case .folder(_, let path) = self { return !path.contains(UInt8(ascii: "/")) }
        return false
    }

    /// The name to show people: the file's name, the folder's path, the tree's name.
    public var displayName: String {
        switch self {
        case .file(let source), .treeFile(_, _, _, let source): source.name
        case .folder(_, let path): String(decoding: path, as: UTF8.self)
        case .commit(_, let name): name
        }
    }
}

/// The source of an item without bytes (a folder, a commit), so that every item can be read alike.
final class EmptySource: FileSource, Sendable {
    static let shared = EmptySource()
    var name: String { "" }
    var size: UInt64? { 0 }
    func read(at offset: UInt64, count: Int) throws -> [UInt8] { [] }
}
