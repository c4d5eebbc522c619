import Sodium

/// The one record format of durable state. A file is an 8-byte magic of its kind, then frames:
///
///     frame: body length (u32, big-endian) | body | BLAKE2b-128 of the body
///
/// A crash while appending leaves at most one frame short or failing its check at the end: a
/// reader stops there, and the writer cuts the file back before it appends again (`Journal`).
public enum RecordFrame {
    public static let magicLength = 8
    static let checkLength = 16
    /// No body is longer: a reader that meets a longer length stops there (damage, not a record).
    public static let maxBodyLength = 65_536

    public static func frame(_ body: [UInt8]) -> [UInt8] {
        var framed: [UInt8] = []
        framed.reserveCapacity(4 + body.count + checkLength)
        for shift in stride(from: 24, through: 0, by: -8) { framed.append(UInt8(truncatingIfNeeded: body.count >> shift)) }
        return framed + body + check(body)
    }

    static func check(_ body: [UInt8]) -> [UInt8] {
        var hash = BLAKE2b(outputLength: checkLength)
        hash.update(body)
        return hash.finalize()
    }
}

/// Reads frames from bytes fed in pieces of any size (a streaming parse: it holds at most one
/// frame's bytes, whatever the file's size).
public struct RecordFrameReader {
    private var pending: [UInt8] = []
    /// Bytes of the frames read so far; the file's good part ends there.
    public private(set) var consumed: UInt64 = 0
    /// A frame was short of its check or too long: nothing after it is read.
    public private(set) var stopped = false

    public init() {}

    /// Feeds `bytes`; calls `visit` with each whole, checked body. A body `visit` refuses (false)
    /// counts as damage: reading stops before it.
    public mutating func feed(_ bytes: ArraySlice<UInt8>, _ visit: ([UInt8]) -> Bool) {
        guard !stopped else { return }
        pending += bytes
        var offset = 0
        defer { pending.removeFirst(offset) }
        while pending.count - offset >= 4 {
            let length = pending[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length <= RecordFrame.maxBodyLength else { stopped = true; return }
            let end = offset + 4 + length + RecordFrame.checkLength
            guard end <= pending.count else { return }
            let body = Array(pending[(offset + 4)..<(offset + 4 + length)])
            guard Array(pending[(end - RecordFrame.checkLength)..<end]) == RecordFrame.check(body), visit(body) else {
                stopped = true
                return
            }
            offset = end
            consumed += UInt64(4 + length + RecordFrame.checkLength)
        }
    }
}
