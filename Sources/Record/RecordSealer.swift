import Pipeline
import Sodium

/// Seals records for one direction (protocol.md §4).
///
/// Per record it allocates exactly the output array and seals into it in place; the nonce buffer is
/// reused. After a `final` record it seals nothing more.
public struct RecordSealer {
    private var schedule: RecordKeySchedule
    private var sentFinal = false
    public let maxPlaintext: Int

    /// - Parameters:
    ///   - key: this direction's 32-byte key from the handshake.
    ///   - rekeyAfter: records per key (`rekeyAfterRecords`; small values are for tests).
    ///   - maxPlaintext: largest plaintext accepted, at most `maxRecordPlaintextAccepted`.
    public init(key: SecureBytes, rekeyAfter: UInt64 = rekeyAfterRecords, maxPlaintext: Int = maxRecordPlaintextAccepted) {
        self.init(key: key, rekeyAfter: rekeyAfter, maxPlaintext: maxPlaintext, startingCounter: 0)
    }

    init(key: SecureBytes, rekeyAfter: UInt64, maxPlaintext: Int = maxRecordPlaintextAccepted, startingCounter: UInt64) {
        schedule = RecordKeySchedule(key: key, rekeyAfter: rekeyAfter, startingCounter: startingCounter)
        self.maxPlaintext = min(max(maxPlaintext, 0), maxRecordPlaintextAccepted)
    }

    /// Records sealed so far (the next record's counter).
    public var recordCount: UInt64 { schedule.counter }

    public mutating func encode(_ unit: Record, into output: inout [[UInt8]]) throws(RecordError) {
        guard !sentFinal else { throw .recordAfterFinal }
        guard unit.plaintext.count <= maxPlaintext else { throw .tooLarge }
        let header: UInt8 = unit.isFinal ? RecordFormat.finalBit : 0
        let recordLength = RecordFormat.headerLength + unit.plaintext.count + RecordFormat.tagLength
        let sealed = try schedule.withNextRecord { (key, nonce) throws(RecordError) -> [UInt8] in
            try Self.seal(unit.plaintext, header: header, length: recordLength, key: key, nonce: nonce)
        }
        if unit.isFinal { sentFinal = true }
        output.append(sealed)
    }

    private static func seal(
        _ plaintext: [UInt8], header: UInt8, length: Int, key: SecureBytes, nonce: UnsafeRawBufferPointer
    ) throws(RecordError) -> [UInt8] {
        do {
            return try [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
                let record = UnsafeMutableRawBufferPointer(buffer)
                record[0] = header
                let body = UnsafeMutableRawBufferPointer(rebasing: record[RecordFormat.headerLength...])
                let written = try plaintext.withUnsafeBytes { plaintextBytes in
                    try withUnsafeBytes(of: header) { headerByte in
                        try AEAD.xChaCha20Poly1305IETF.seal(key: key, nonce: nonce, plaintext: plaintextBytes,
                                                       associatedData: headerByte, into: body)
                    }
                }
                initialized = RecordFormat.headerLength + written
            }
        } catch {
            // Only reachable with a key of the wrong size.
            throw .authenticationFailed
        }
    }
}
