/// Records per key before both sides derive the next key (protocol.md, `RekeyAfterRecords`).
public let rekeyAfterRecords: UInt64 = 65536

/// Header byte plus the Poly1305 tag: what a record adds to its plaintext.
public let recordOverhead = 1 + 16

/// The largest plaintext a record may carry: one framing message (65535 bytes) minus the overhead.
public let maxRecordPlaintextAccepted = 65535 - recordOverhead

/// The wire layout of a record (protocol.md §4): header ‖ XChaCha20-Poly1305(ciphertext ‖ tag).
enum RecordFormat {
    static let headerLength = 1
    static let tagLength = 16
    /// Header bit 0: the last record this side sends in the session.
    static let finalBit: UInt8 = 0x01
    /// Header bits 1...7 must be zero.
    static let reservedBits: UInt8 = 0xFE
    /// The message keyed with the old key to derive the next one.
    static let rekeyLabel: [UInt8] = Array("blesend/1 rekey".utf8)
}
