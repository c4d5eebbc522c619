import Sodium

/// The fixed inputs of the catalogue's vectors: keys derived from ASCII labels with BLAKE2b-256
/// (so anyone can re-derive them), readable transfer ids, one wall clock, GATT-sized datagrams.
/// Test-only keys: never use them for anything else.
enum FixedInputs {
    /// November 2025, in nanoseconds since the Unix epoch; connection N is handed this plus N - 1 minutes.
    static let wallClock: UInt64 = 1_763_000_000_000_000_000
    /// At ATT MTU 247 (the usual LE data length): writes carry MTU - 3, notifications MTU - 5.
    static let senderDatagramSize = 244
    static let receiverDatagramSize = 242

    /// BLAKE2b-256 of `"blesend wire vectors: " + label`, used as an X25519 secret key.
    static func secret(_ label: String) -> [UInt8] {
        BLAKE2b.hash(Array("blesend wire vectors: \(label)".utf8), outputLength: 32)
    }

    static func publicKey(_ secret: [UInt8]) throws(SetupError) -> [UInt8] {
        do {
            return try X25519.publicKey(for: SecureBytes(copying: secret))
        } catch {
            throw SetupError("cannot derive a public key: \(error)")
        }
    }

    /// Connection `number` (1-based): its own ephemeral keys and wall clock.
    static func connection(_ number: Int, datagramSizes: (sender: Int, receiver: Int) = (senderDatagramSize, receiverDatagramSize))
        -> WireVector.Connection {
        WireVector.Connection(
            wallClock: wallClock + UInt64(number - 1) * 60_000_000_000,
            senderDatagramSize: datagramSizes.sender, receiverDatagramSize: datagramSizes.receiver,
            senderEphemeral: secret("connection \(number) sender ephemeral"),
            receiverEphemeral: secret("connection \(number) receiver ephemeral"))
    }

    /// Transfer id `number` (1-based): sixteen bytes of 0x11 × number (0x11…, 0x22…, …).
    static func transferID(_ number: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: 0x11 * number), count: 16)
    }

    /// `count` bytes counting up modulo 251 (a prime, so record and frame boundaries fall on different values).
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8($0 % 251) }
    }
}
