import Pipeline
import Sodium
import Transfer

/// What a receiver that keeps partials across runs records of a folder being received, beside
/// its staging folder (`.TOP.TAG-XXXXXX.blesend-keep` beside `.TOP.TAG-XXXXXX.blesend-part`):
/// whose folder it is, and what was settled in it, so that a restarted receiver takes it up
/// where it was (`TreeRecovery`).
public enum TreeRecord: Equatable, Sendable {
    /// The first record: whose folder it is and how it arrived, and the top folder's name as reduced.
    case head(TreeOrigin, name: String)
    /// A `folder` item was made (`path` below the top folder).
    case folder(id: TransferID, path: [String])
    /// A file was finished: its data and its folder entry are durable.
    case file(id: TransferID, path: [String], size: UInt64)
    /// A file part-way: its first `durable` bytes (and its folder entry) are durable and hash to
    /// `prefixHash`.
    case checkpoint(id: TransferID, path: [String], size: UInt64?, executable: Bool, durable: UInt64, prefixHash: [UInt8])

    var isHead: Bool {
        if case .head = self { return true }
        return false
    }
}

/// The journal file of `TreeRecord`s, appended on a `PartialFolder`:
///
///     "BSTREE01" | frame*      frame: body length u16 | body | BLAKE2b-128 of the body
///     body: kind u8 | saved at, seconds since 1970 u64 | fields
///     head (0):       sender key (32) | tree id (16) | top folder's transfer id (16) | top length u16 | top
///                     | name length u16 | name
///     folder (1):     transfer id (16) | path length u16 | path
///     file (2):       transfer id (16) | size u64 | path length u16 | path
///     checkpoint (3): transfer id (16) | has size u8 | size u64 | executable u8 | durable u64
///                     | prefix hash (32) | path length u16 | path
///
/// Integers are big-endian; a path is its components (each `isSafeComponent`) joined by `/`.
/// Each frame is written and synced before what it claims is answered; reading stops at the
/// first frame that is short or fails its check (a crash while appending), and appends go on
/// from there. Local state, never sent: its format may change with a new magic.
public final class TreeJournal {
    public static let magic = Array("BSTREE01".utf8)
    static let checkLength = 16
    static let maxBodyLength = Int(UInt16.max)

    private let folder: any PartialFolder
    public let name: String
    /// The end of the last good frame: where the next one goes.
    private var end: UInt64

    /// Creates the journal `name` (mode 0600, never over an existing file) holding `head`, synced
    /// with its folder entry.
    public static func create(in folder: any PartialFolder, name: String, head: TreeRecord) throws(StorageError) -> TreeJournal {
        try folder.create(name)
        let journal = TreeJournal(folder: folder, name: name, end: 0)
        do throws(StorageError) {
            try folder.write(name, magic, at: 0)
            journal.end = UInt64(magic.count)
            try journal.append(head)
            try folder.syncFolder()
        } catch {
            folder.remove(name)
            throw error
        }
        return journal
    }

    /// The journal `name` as read at start, appended from `end` (`read(_:)`'s end).
    public init(folder: any PartialFolder, name: String, end: UInt64) {
        self.folder = folder
        self.name = name
        self.end = end
    }

    /// Appends `record` and syncs it: once this returns, a crash keeps it.
    public func append(_ record: TreeRecord) throws(StorageError) {
        let frame = Self.frame(record, savedAt: folder.secondsSinceEpoch())
        try folder.write(name, frame, at: end)
        try folder.sync(name)
        end += UInt64(frame.count)
    }

    /// Stops writing, keeping the file for a later run.
    public func close() { folder.closeFile(name) }

    /// Removes the file (not yet durable: `PartialFolder.syncFolder`).
    public func remove() { folder.remove(name) }

    /// What `bytes` hold: the records that read (a head first) with the latest time any was
    /// saved, and where the good part ends; nil when they do not start with the magic and a head.
    public static func read(_ bytes: [UInt8]) -> (records: [TreeRecord], savedAt: UInt64, end: UInt64)? {
        guard bytes.starts(with: magic) else { return nil }
        var records: [TreeRecord] = []
        var savedAt: UInt64 = 0
        var offset = magic.count
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let bodyStart = offset + 2
            guard bodyStart + length + checkLength <= bytes.count else { break }
            let body = Array(bytes[bodyStart..<(bodyStart + length)])
            guard Array(bytes[(bodyStart + length)..<(bodyStart + length + checkLength)]) == check(body),
                  let (record, time) = try? decode(body) else { break }
            // A head first, and only first.
            guard record.isHead == records.isEmpty else { break }
            records.append(record)
            savedAt = max(savedAt, time)
            offset = bodyStart + length + checkLength
        }
        guard !records.isEmpty else { return nil }
        return (records, savedAt, UInt64(offset))
    }

    static func frame(_ record: TreeRecord, savedAt: UInt64) -> [UInt8] {
        let body = encode(record, savedAt: savedAt)
        var frame: [UInt8] = []
        frame.appendBigEndian(UInt16(body.count))
        return frame + body + check(body)
    }

    private static func encode(_ record: TreeRecord, savedAt: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        func field(_ value: [UInt8]) {
            bytes.appendBigEndian(UInt16(value.count))
            bytes += value
        }
        func path(_ components: [String]) { field(Array(components.joined(separator: "/").utf8)) }
        switch record {
        case .head(let origin, let name):
            bytes.append(0)
            bytes.appendBigEndian(savedAt)
            bytes += origin.senderKey + origin.tree.bytes + origin.folder.bytes
            field(origin.top)
            field(Array(name.utf8))
        case .folder(let id, let components):
            bytes.append(1)
            bytes.appendBigEndian(savedAt)
            bytes += id.bytes
            path(components)
        case .file(let id, let components, let size):
            bytes.append(2)
            bytes.appendBigEndian(savedAt)
            bytes += id.bytes
            bytes.appendBigEndian(size)
            path(components)
        case .checkpoint(let id, let components, let size, let executable, let durable, let prefixHash):
            bytes.append(3)
            bytes.appendBigEndian(savedAt)
            bytes += id.bytes
            bytes.append(size == nil ? 0 : 1)
            bytes.appendBigEndian(size ?? 0)
            bytes.append(executable ? 1 : 0)
            bytes.appendBigEndian(durable)
            bytes += prefixHash
            path(components)
        }
        return bytes
    }

    private static func decode(_ body: [UInt8]) throws(ByteReaderError) -> (TreeRecord, UInt64)? {
        var reader = ByteReader(body)
        let kind = try reader.readUInt8()
        let savedAt = try reader.readUInt64()
        func field() throws(ByteReaderError) -> [UInt8] { Array(try reader.readBytes(Int(try reader.readUInt16()))) }
        func id() throws(ByteReaderError) -> TransferID? { TransferID(bytes: try reader.readBytes(TransferConstants.idLength)) }
        func path() throws(ByteReaderError) -> [String]? {
            guard let text = String(validating: try field(), as: UTF8.self) else { return nil }
            let components = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !components.isEmpty, components.count <= TransferConstants.maxPathDepth,
                  components.allSatisfy(isSafeComponent) else { return nil }
            return components
        }
        let record: TreeRecord
        switch kind {
        case 0:
            let senderKey = Array(try reader.readBytes(32))
            guard let tree = try id(), let folder = try id() else { return nil }
            let top = try field()
            guard let name = String(validating: try field(), as: UTF8.self), isSafeComponent(name),
                  !top.isEmpty, top.count <= TransferConstants.maxPathLength else { return nil }
            record = .head(TreeOrigin(senderKey: senderKey, tree: tree, folder: folder, top: top), name: name)
        case 1:
            guard let id = try id(), let components = try path() else { return nil }
            record = .folder(id: id, path: components)
        case 2:
            guard let id = try id() else { return nil }
            let size = try reader.readUInt64()
            guard let components = try path() else { return nil }
            record = .file(id: id, path: components, size: size)
        case 3:
            guard let id = try id() else { return nil }
            let hasSize = try reader.readUInt8()
            let size = try reader.readUInt64()
            let executable = try reader.readUInt8()
            let durable = try reader.readUInt64()
            let prefixHash = Array(try reader.readBytes(TransferConstants.hashLength))
            guard hasSize <= 1, executable <= 1, hasSize == 0 || durable <= size, let components = try path() else { return nil }
            record = .checkpoint(id: id, path: components, size: hasSize == 1 ? size : nil, executable: executable == 1,
                                 durable: durable, prefixHash: prefixHash)
        default:
            return nil
        }
        try reader.expectEnd()
        return (record, savedAt)
    }

    private static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: checkLength)
        hash.update(body)
        return hash.finalize()
    }
}
