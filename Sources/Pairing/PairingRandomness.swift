import Sodium

/// Where a pairing state machine gets its random bytes: `count` bytes per call. libsodium's
/// generator (`Random.bytes`) in use; a seeded source in tests and vectors. A source that returns
/// another number of bytes than asked stops the program: it is the programmer's, not the peer's.
public typealias PairingRandomSource = (Int) -> [UInt8]

enum PairingRandomness {
    /// Exactly `count` bytes from `source`.
    static func draw(_ count: Int, from source: PairingRandomSource) -> [UInt8] {
        let bytes = source(count)
        precondition(bytes.count == count, "a PairingRandomSource returned \(bytes.count) bytes for \(count)")
        return bytes
    }

    /// A CPace scalar from 64 bytes of `source` (`CPace.scalar(fromRandom:)`).
    static func scalar(from source: PairingRandomSource) throws(PairingError) -> SecureBytes {
        var wide = draw(Ristretto255.wideScalarLength, from: source)
        do {
            return try CPace.scalar(fromRandom: &wide)
        } catch {
            throw .invalidShare
        }
    }
}
