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

/// The journal of `TreeRecord`s of one folder being received, a `Journal` (magic `BSTREE02`) on
/// the output folder's `DurableDisk`. Each record's body:
///
///     kind u8 | saved at, seconds since 1970 u64 | fields
///     head (0):       sender key (32) | tree id (16) | top folder's transfer id (16) | top length u16 | top
///                     | name length u16 | name
///     folder (1):     transfer id (16) | path length u16 | path
///     file (2):       transfer id (16) | size u64 | path length u16 | path
///     checkpoint (3): transfer id (16) | has size u8 | size u64 | executable u8 | durable u64
///                     | prefix hash (32) | path length u16 | path
///
/// Integers are big-endian; a path is its components (each `isSafeComponent`) joined by `/`.
/// Each record is written and synced before what it claims is answered; reading stops at the
/// first record that is torn or does not decode, and appends go on from there. Local state,
/// never sent: its format may change with a new magic (`BSTREE01`, up to 0.4.0, had 16-bit
/// frame lengths; such a journal does not read, and its folder is removed as expired).
public final class TreeJournal {
    public static let magic = Array("BSTREE02".utf8)

    private let disk: any DurableDisk
    private let journal: Journal
    public var name: String { journal.name }

    /// Creates the journal `name` (mode 0600, never over an existing file) holding `head`, synced
    /// with its folder entry.
    public static func create(in disk: any DurableDisk, name: String, head: TreeRecord) throws(StorageError) -> TreeJournal {
        TreeJournal(disk: disk, journal: try Journal.create(disk: disk, name: name, magic: magic,
                                                            first: encode(head, savedAt: disk.secondsSinceEpoch())))
    }

    private init(disk: any DurableDisk, journal: Journal) {
        self.disk = disk
        self.journal = journal
    }

    /// Paths (folders and files) a kept folder may hold: past this, the folder is received on but
    /// no longer kept across runs (the receiver removes its journal: Storage's
    /// `DirectoryIncomingTree`), and a start that finds a journal of more removes it unread.
    public static let maxPaths = 20_000
    /// A journal longer than this is not read (it is no journal a receiver wrote: compacted at
    /// each start, checkpoints every 256 KiB); its folder is removed.
    public static let maxBytes: UInt64 = 64 << 20

    /// What the journal `name` holds, read as a stream and folded (`TreeJournalContents`), where
    /// its good part ends, and the journal to append to; nil when it is no tree journal, has no
    /// head, or is longer than `maxBytes`.
    public static func read(in disk: any DurableDisk, name: String) throws(StorageError)
        -> (contents: TreeJournalContents, end: UInt64, journal: TreeJournal)? {
        guard try disk.length(name) <= maxBytes else { return nil }
        var contents: TreeJournalContents?
        let scan = try Journal.scan(disk: disk, name: name, magic: magic) { body in
            guard let (record, time) = try? decode(body) else { return false }
            guard contents != nil else {
                contents = TreeJournalContents(head: record, savedAt: time)
                return contents != nil
            }
            return contents?.take(record, savedAt: time) ?? false
        }
        guard let scan, let contents, !contents.overflowed else { return nil }
        return (contents, scan.end, TreeJournal(disk: disk, journal: Journal(disk: disk, name: name, magic: magic, end: scan.end)))
    }

    /// Writes the journal anew with what `contents` says, in one step a crash cannot split; a
    /// record saved in the future (the clock went back) is stamped `now`.
    public func compact(_ contents: TreeJournalContents, now: UInt64) throws(StorageError) {
        let stamp = min(contents.savedAt, now)
        try journal.rewrite(contents.compacted.map { Self.encode($0, savedAt: stamp) })
    }

    /// Appends `record` and syncs it: once this returns, a crash keeps it.
    public func append(_ record: TreeRecord) throws(StorageError) {
        try journal.append(Self.encode(record, savedAt: disk.secondsSinceEpoch()))
    }

    /// Stops writing, keeping the file for a later run.
    public func close() { journal.close() }

    /// Removes the file (not yet durable: `DurableDisk.syncFolder`).
    public func remove() { journal.remove() }

    static func encode(_ record: TreeRecord, savedAt: UInt64) -> [UInt8] {
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

    static func decode(_ body: [UInt8]) throws(ByteReaderError) -> (TreeRecord, UInt64)? {
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
}
