#if canImport(Glibc)
import Glibc
#endif
import Transfer
import Pipeline

/// A file of a folder being sent: opened only when its bytes are first read, and closed once the
/// receiver holds all of it (`release` at its size), so that sending thousands of files holds a
/// few descriptors, not thousands. Read again after that (a resume), it opens again.
public final class DeferredFileSource: FileSource {
    public let name: String
    /// The size the listing found; the bytes sent are never more.
    public let size: UInt64?
    /// The transfer id it goes under, made from the folder's tree id and the file (`outgoingItems`).
    public var transferID: TransferID?
    /// An earlier run of the same folder may have sent some of it (`FileSource.sentBefore`).
    public var sentBefore = false
    private let open: () throws(StorageError) -> LocalFileSource
    private var opened: LocalFileSource?

    public init(name: String, size: UInt64, open: @escaping () throws(StorageError) -> LocalFileSource) {
        self.name = name
        self.size = size
        self.open = open
    }

    public func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        let file: LocalFileSource
        if let opened {
            file = opened
        } else {
            file = try open()
            opened = file
        }
        return try file.read(at: offset, count: count)
    }

    public func release(before offset: UInt64) {
        if let size, offset >= size { opened = nil }
    }

    /// Whether the file is open now (for tests).
    public var isOpen: Bool { opened != nil }
}

extension LocalTree {
    /// Whether `path` names a folder (following a symbolic link given by the user, as `LocalTree` does).
    public static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}

extension LocalTree {
    /// What a sender sends for this folder (extension `folders`): its folders and files in listing
    /// order, each file opened only when it is sent, then the commit. `fileID`: each file's transfer
    /// id, made from its entry (whose `stamp` changes with the file), so that a run again under
    /// the same tree id offers it under the same id; `sentBefore`: such an earlier run began
    /// sending this folder, and the receiver may hold some of it to resume.
    public func outgoingItems(tree id: TransferID, fileID: ((LocalTreeEntry) -> TransferID)? = nil, sentBefore: Bool = false) -> [OutgoingItem] {
        guard let top = entries.first?.components.first else { return [] }
        var items: [OutgoingItem] = []
        items.reserveCapacity(entries.count + 1)
        for entry in entries {
            switch entry.kind {
            case .folder:
                items.append(.folder(tree: id, path: entry.wirePath))
            case .file(let size, let executable):
                let source = DeferredFileSource(name: entry.path, size: size) { () throws(StorageError) in try openFile(entry) }
                source.transferID = fileID?(entry)
                source.sentBefore = sentBefore && source.transferID != nil
                items.append(.treeFile(tree: id, path: entry.wirePath, executable: executable, source: source))
            }
        }
        items.append(.commit(tree: id, name: top))
        return items
    }
}
