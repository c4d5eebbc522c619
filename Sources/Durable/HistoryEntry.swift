/// One line of a tool's history (`blesend history`, `blerecv history`): a file sent or received,
/// or one that failed.
public struct HistoryEntry: Equatable, Sendable {
    public enum Direction: UInt8, Sendable { case sent = 0, received = 1 }
    public enum Outcome: UInt8, Sendable { case saved = 0, failed = 1 }

    /// Seconds since 1970.
    public var time: UInt64
    public var direction: Direction
    public var outcome: Outcome
    /// It continued a transfer begun on an earlier connection or run.
    public var resumed: Bool
    public var size: UInt64
    /// File data this side sent or received for it on the air (resent bytes included); nil when
    /// not known.
    public var airBytes: UInt64?
    /// The whole-file BLAKE2b-256; empty for a failure.
    public var hash: [UInt8]
    /// The peer's name (its `.pub` file or trust entry) and fingerprint.
    public var peer: String
    public var fingerprint: String
    /// Where the file is (received: its stored path) or was read from (sent: as given).
    public var path: String
    /// `l2cap` or `gatt`; empty when not known.
    public var transport: String
    /// Why it failed; empty for a success.
    public var detail: String

    public init(time: UInt64, direction: Direction, outcome: Outcome, resumed: Bool, size: UInt64, airBytes: UInt64?,
                hash: [UInt8], peer: String, fingerprint: String, path: String, transport: String, detail: String = "") {
        self.time = time
        self.direction = direction
        self.outcome = outcome
        self.resumed = resumed
        self.size = size
        self.airBytes = airBytes
        self.hash = hash
        self.peer = peer
        self.fingerprint = fingerprint
        self.path = path
        self.transport = transport
        self.detail = detail
    }
}
