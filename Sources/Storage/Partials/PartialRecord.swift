import Pipeline
import Sodium
import Transfer

/// The checkpoint record kept beside a partial file (`.blesend-keep`): a `PartialCheckpoint` and
/// when it was written, checked by a BLAKE2b-128 of the rest so that a damaged record is known.
///
///     "BSKEEP01" | sender key (32) | transfer id (16) | has size (1) | size (8) | durable (8)
///     | saved at, seconds since 1970 (8) | prefix hash (32) | name length (2) | name | check (16)
///
/// Integers are big-endian. It is local state, never sent: its format may change with a new magic.
public struct PartialRecord: Equatable, Sendable {
    public static let magic = Array("BSKEEP01".utf8)
    static let checkLength = 16
    /// A record is never longer: the name is at most 255 bytes.
    public static let maxLength = 512

    public let checkpoint: PartialCheckpoint
    public let savedAt: UInt64

    public init(checkpoint: PartialCheckpoint, savedAt: UInt64) {
        self.checkpoint = checkpoint
        self.savedAt = savedAt
    }

    public func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes += checkpoint.senderKey
        bytes += checkpoint.id.bytes
        bytes.append(checkpoint.size == nil ? 0 : 1)
        bytes.appendBigEndian(checkpoint.size ?? 0)
        bytes.appendBigEndian(checkpoint.durable)
        bytes.appendBigEndian(savedAt)
        bytes += checkpoint.prefixHash
        let name = Array(checkpoint.name.utf8)
        bytes.appendBigEndian(UInt16(name.count))
        bytes += name
        return bytes + Self.check(bytes)
    }

    /// The record in `bytes`; nil for anything else (another format, damaged, cut short).
    public init?(decoding bytes: [UInt8]) {
        guard bytes.count > Self.checkLength, bytes.count <= Self.maxLength else { return nil }
        let body = Array(bytes.dropLast(Self.checkLength))
        guard Array(bytes.suffix(Self.checkLength)) == Self.check(body),
              let (checkpoint, savedAt) = try? Self.fields(body) else { return nil }
        self.checkpoint = checkpoint
        self.savedAt = savedAt
    }

    private static func fields(_ body: [UInt8]) throws(ByteReaderError) -> (PartialCheckpoint, UInt64)? {
        var reader = ByteReader(body)
        guard Array(try reader.readBytes(magic.count)) == magic else { return nil }
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

    private static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: checkLength)
        hash.update(body)
        return hash.finalize()
    }
}

