import Handshake
import Pipeline
import Transfer
import Synchronization

/// A `CompletedMemory` on disk: one `Journal` record (magic `BSDONE01`) per file a receiver
/// stored, synced after the file got its name: sender key (32), transfer id (16), size (u64),
/// stored name (u16 length, UTF-8). At most `maxBytes` (the newest kept); the ledger keeps the
/// newest 256 of what it recalls.
public final class CompletedJournal: CompletedMemory {
    public static let magic = Array("BSDONE01".utf8)
    private let journal: Journal
    /// One append at a time: connections' storage workers write down their commits at once.
    private let appending = Mutex(())
    public let recalled: [CompletedTransfer]
    /// The file at start did not read as this journal, and was replaced by an empty one.
    public let replacedUnreadable: Bool

    public init(disk: any DurableDisk, name: String, maxBytes: UInt64 = 64 << 10) throws(StorageError) {
        var recalled: [CompletedTransfer] = []
        let found: Journal.Found
        (journal, found) = try Journal.open(disk: disk, name: name, magic: Self.magic, maxBytes: maxBytes) { body in
            if let transfer = try? Self.decode(body) { recalled.append(transfer) }
            return true
        }
        self.recalled = recalled
        replacedUnreadable = found == .replacedUnreadable
    }

    public func remember(_ transfer: CompletedTransfer) throws {
        let record = Self.encode(transfer)
        try appending.withLock { _ throws(StorageError) in try journal.append(record) }
    }

    static func encode(_ transfer: CompletedTransfer) -> [UInt8] {
        var body = transfer.senderKey + transfer.id.bytes
        body.appendBigEndian(transfer.size)
        let name = Array(transfer.storedName.utf8.prefix(1_024))
        body.appendBigEndian(UInt16(name.count))
        return body + name
    }

    static func decode(_ body: [UInt8]) throws(ByteReaderError) -> CompletedTransfer? {
        var reader = ByteReader(body)
        let key = Array(try reader.readBytes(32))
        guard let id = TransferID(bytes: try reader.readBytes(TransferConstants.idLength)) else { return nil }
        let size = try reader.readUInt64()
        let name = try reader.readBytes(Int(try reader.readUInt16()))
        try reader.expectEnd()
        guard let storedName = String(validating: name, as: UTF8.self) else { return nil }
        return CompletedTransfer(senderKey: key, id: id, storedName: storedName, size: size)
    }
}
