import Pipeline
import Sodium

/// Opens records for one direction (protocol.md §4).
///
/// Any error ends the stream: every later `decode` throws the same error. After a `final` record,
/// anything more is `.recordAfterFinal`. Per record it allocates exactly the plaintext array and
/// opens into it in place; the nonce buffer is reused.
public struct RecordOpener {
    private var schedule: RecordKeySchedule
    private var receivedFinal = false
    private var failure: RecordError?
    public let maxPlaintext: Int

    /// - Parameters:
    ///   - key: this direction's 32-byte key from the handshake.
    ///   - rekeyAfter: records per key; must match the sealer's.
    ///   - maxPlaintext: largest plaintext accepted (default: as much as a 65535-byte message holds).
    public init(key: SecureBytes, rekeyAfter: UInt64 = rekeyAfterRecords, maxPlaintext: Int = maxRecordPlaintextAccepted) {
        self.init(key: key, rekeyAfter: rekeyAfter, maxPlaintext: maxPlaintext, startingCounter: 0)
    }

    init(key: SecureBytes, rekeyAfter: UInt64, maxPlaintext: Int = maxRecordPlaintextAccepted, startingCounter: UInt64) {
        schedule = RecordKeySchedule(key: key, rekeyAfter: rekeyAfter, startingCounter: startingCounter)
        self.maxPlaintext = max(maxPlaintext, 0)
    }

    /// Records opened so far (the next record's counter).
    public var recordCount: UInt64 { schedule.counter }
    /// True once the peer's `final` record has been opened.
    public var isFinished: Bool { receivedFinal }

    public mutating func decode(_ unit: [UInt8], into output: inout [Record]) throws(RecordError) {
        do throws(RecordError) {
            output.append(try open(unit))
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func open(_ record: [UInt8]) throws(RecordError) -> Record {
        if let failure { throw failure }
        guard !receivedFinal else { throw .recordAfterFinal }
        guard record.count >= recordOverhead else { throw .truncated }
        let header = record[0]
        guard header & RecordFormat.reservedBits == 0 else { throw .reservedBitsSet }
        let plaintextLength = record.count - recordOverhead
        guard plaintextLength <= maxPlaintext else { throw .tooLarge }
        let plaintext = try schedule.withNextRecord { (key, nonce) throws(RecordError) -> [UInt8] in
            try Self.open(record, plaintextLength: plaintextLength, key: key, nonce: nonce)
        }
        let isFinal = header & RecordFormat.finalBit != 0
        if isFinal { receivedFinal = true }
        return Record(plaintext: plaintext, isFinal: isFinal)
    }

    private static func open(
        _ record: [UInt8], plaintextLength: Int, key: SecureBytes, nonce: UnsafeRawBufferPointer
    ) throws(RecordError) -> [UInt8] {
        do {
            return try [UInt8](unsafeUninitializedCapacity: plaintextLength) { buffer, initialized in
                initialized = try record.withUnsafeBytes { recordBytes in
                    try AEAD.xChaCha20Poly1305IETF.open(
                        key: key, nonce: nonce,
                        ciphertext: UnsafeRawBufferPointer(rebasing: recordBytes[RecordFormat.headerLength...]),
                        associatedData: UnsafeRawBufferPointer(rebasing: recordBytes[..<RecordFormat.headerLength]),
                        into: UnsafeMutableRawBufferPointer(buffer))
                }
            }
        } catch {
            throw .authenticationFailed
        }
    }
}
