import Sodium

/// One direction's key and counter (protocol.md §4): the counter starts at 0 and grows by one
/// per record; every `rekeyAfter` records the key becomes
/// BLAKE2b-256(key: old key, message: "blesend/1 rekey"). The counter never wraps: the last
/// value, 2^64 - 1, is never used.
///
/// The 24-byte nonce (16 zero bytes ‖ counter, big-endian) lives in a buffer reused for every
/// record.
struct RecordKeySchedule {
    private(set) var key: SecureBytes
    /// The counter of the next record.
    private(set) var counter: UInt64
    let rekeyAfter: UInt64
    private var nonce = [UInt8](repeating: 0, count: AEAD.xChaCha20Poly1305IETF.nonceLength)

    /// `rekeyAfter` of 0 is treated as 1. `startingCounter` is for tests (counter exhaustion).
    init(key: SecureBytes, rekeyAfter: UInt64, startingCounter: UInt64 = 0) {
        self.key = key
        self.rekeyAfter = max(rekeyAfter, 1)
        self.counter = startingCounter
    }

    /// Runs `body` with the key and nonce for the next record. The schedule moves on only if
    /// `body` succeeds.
    mutating func withNextRecord<R>(
        _ body: (SecureBytes, UnsafeRawBufferPointer) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        guard counter != .max else { throw .counterExhausted }
        let value = counter
        // The closure does not throw (Array's API would erase the error type); the outcome is
        // carried out as a Result instead.
        let outcome = nonce.withUnsafeMutableBytes { nonceBytes -> Result<R, RecordError> in
            let counterStart = nonceBytes.count - 8
            for index in 0..<8 {
                nonceBytes[counterStart + index] = UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * index))
            }
            do throws(RecordError) {
                return .success(try body(key, UnsafeRawBufferPointer(nonceBytes)))
            } catch {
                return .failure(error)
            }
        }
        let result = try outcome.get()
        counter = value + 1
        if counter % rekeyAfter == 0 {
            key = BLAKE2b.secretHash(RecordFormat.rekeyLabel, outputLength: 32, key: key)
        }
        return result
    }
}
