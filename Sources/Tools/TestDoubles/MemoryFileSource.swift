import Transfer

/// A file held in memory.
public final class MemoryFileSource: FileSource {
    public let name: String
    public let bytes: [UInt8]
    public var transferID: TransferID?
    private let announcesSize: Bool

    /// - Parameter asStream: offer it as a stream of unknown size.
    public init(name: String, bytes: [UInt8], asStream: Bool = false) {
        self.name = name
        self.bytes = bytes
        self.announcesSize = !asStream
    }

    public var size: UInt64? { announcesSize ? UInt64(bytes.count) : nil }

    public func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard offset < UInt64(bytes.count) else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }
}
