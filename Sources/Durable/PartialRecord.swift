import Pipeline
import Sodium
import Transfer

/// The checkpoint record kept beside a partial file (`.blesend-keep`): a `PartialCheckpoint` and
/// when it was written, one record in the one format (`RecordFrame`), written whole each time.
///
///     "BSKEEP02" | frame of: sender key (32) | transfer id (16) | has size (1) | size (8)
///     | durable (8) | saved at, seconds since 1970 (8) | prefix hash (32) | name length (2) | name
///
/// Integers are big-endian. It is local state, never sent: its format may change with a new magic
/// (`BSKEEP01`, up to 0.4.0, does not read: its partial is removed as damaged).
public struct PartialRecord: Equatable, Sendable {
    public static let magic = Array("BSKEEP02".utf8)
    /// A record is never longer: the name is at most 255 bytes.
    public static let maxLength = 512

    public let checkpoint: PartialCheckpoint
    public let savedAt: UInt64

    public init(checkpoint: PartialCheckpoint, savedAt: UInt64) {
        self.checkpoint = checkpoint
        self.savedAt = savedAt
    }

    public func encoded() -> [UInt8] {
        var body = checkpoint.senderKey
        body += checkpoint.id.bytes
        body.append(checkpoint.size == nil ? 0 : 1)
        body.appendBigEndian(checkpoint.size ?? 0)
        body.appendBigEndian(checkpoint.durable)
        body.appendBigEndian(savedAt)
        body += checkpoint.prefixHash
        let name = Array(checkpoint.name.utf8)
        body.appendBigEndian(UInt16(name.count))
        body += name
        return Self.magic + RecordFrame.frame(body)
    }

    /// The record in `bytes`; nil for anything else (another format, damaged, cut short).
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count <= Self.maxLength, bytes.starts(with: Self.magic) else { return nil }
        var reader = RecordFrameReader()
        var fields: (PartialCheckpoint, UInt64)?
        var frames = 0
        reader.feed(bytes[Self.magic.count...]) { body in
            frames += 1
            fields = frames == 1 ? (try? Self.fields(body)) ?? nil : nil   // one record, no more
            return fields != nil
        }
        guard let (checkpoint, savedAt) = fields, UInt64(Self.magic.count) + reader.consumed == UInt64(bytes.count) else { return nil }
        self.checkpoint = checkpoint
        self.savedAt = savedAt
    }

    private static func fields(_ body: [UInt8]) throws(ByteReaderError) -> (PartialCheckpoint, UInt64)? {
        var reader = ByteReader(body)
        let senderKey = Array(try reader.readBytes(32))
        guard let id = TransferID(bytes: try reader.readBytes(TransferConstants.idLength)) else { return nil }
        let hasSize = try reader.readUInt8()
        let size = try reader.readUInt64()
        let durable = try reader.readUInt64()
        let savedAt = try reader.readUInt64()
        let prefixHash = Array(try reader.readBytes(TransferConstants.hashLength))
        let nameBytes = try reader.readBytes(Int(try reader.readUInt16()))
        try reader.expectEnd()
        guard hasSize <= 1, hasSize == 0 || durable <= size,
              let name = String(validating: nameBytes, as: UTF8.self), isSafeComponent(name) else { return nil }
        return (PartialCheckpoint(senderKey: senderKey, id: id, name: name, size: hasSize == 1 ? size : nil,
                                  durable: durable, prefixHash: prefixHash), savedAt)
    }
}

