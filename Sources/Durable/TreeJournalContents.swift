import Transfer

/// What a tree journal says of its folder, folded as the journal is read: the last word on each
/// path (a folder made, a file finished, or a file's latest checkpoint), so that memory grows with
/// the folder's paths and not with the journal's length (a checkpoint every 256 KiB of each file).
public struct TreeJournalContents: Sendable {
    public let origin: TreeOrigin
    /// The top folder's name as reduced.
    public let name: String
    /// The latest time any record was saved.
    public private(set) var savedAt: UInt64
    /// Folders made, by path joined with `/`.
    public private(set) var folders: [String: (id: TransferID, path: [String])] = [:]
    /// Files finished, by path.
    public private(set) var finished: [String: (id: TransferID, path: [String], size: UInt64)] = [:]
    /// Files part-way: the latest checkpoint of each file not finished, by path.
    public private(set) var partway: [String: TreeRecord] = [:]
    /// Records read, head included.
    public private(set) var records = 1
    /// It spoke of more than `maxPaths` paths: no journal a receiver wrote.
    public private(set) var overflowed = false

    /// Paths a journal may speak of: past this, it is no journal a receiver wrote (it stops
    /// recording first: `TreeJournal.maxPaths`).
    public static let maxPaths = TreeJournal.maxPaths

    /// Contents that begin with `head`; nil for any other record.
    init?(head: TreeRecord, savedAt: UInt64) {
        guard case .head(let origin, let name) = head else { return nil }
        self.origin = origin
        self.name = name
        self.savedAt = savedAt
    }

    /// Takes in the next record; false for one that cannot follow (a second head), or for one
    /// past `maxPaths` paths (`overflowed`).
    mutating func take(_ record: TreeRecord, savedAt time: UInt64) -> Bool {
        switch record {
        case .head:
            return false
        case .folder(let id, let path):
            folders[path.joined(separator: "/")] = (id, path)
        case .file(let id, let path, let size):
            let key = path.joined(separator: "/")
            finished[key] = (id, path, size)
            partway[key] = nil
        case .checkpoint(_, let path, _, _, _, _):
            let key = path.joined(separator: "/")
            if finished[key] == nil { partway[key] = record }
        }
        guard paths <= Self.maxPaths else {
            overflowed = true
            return false
        }
        savedAt = max(savedAt, time)
        records += 1
        return true
    }

    /// Paths it speaks of: folders made, files finished, files part-way.
    public var paths: Int { folders.count + finished.count + partway.count }

    /// The records that say as much, head first: what a compacted journal holds (`1 + paths`).
    public var compacted: [TreeRecord] {
        [.head(origin, name: name)]
            + folders.values.sorted { $0.path.count < $1.path.count }.map { .folder(id: $0.id, path: $0.path) }
            + finished.values.map { .file(id: $0.id, path: $0.path, size: $0.size) }
            + partway.values
    }
}
