import Sodium
import Transfer

/// The whole-file hash of the transfer layer: BLAKE2b-256 from libsodium.
struct FileHasher: ContentHasher {
    private var state = BLAKE2b(outputLength: 32)

    mutating func update(_ bytes: [UInt8]) { state.update(bytes) }
    mutating func finalize() -> [UInt8] { state.finalize() }
}

/// A fresh random transfer id.
public func randomTransferID() -> TransferID {
    TransferID(halves: Random.bytes(16).reduce(into: (UInt64(0), UInt64(0))) { acc, byte in
        acc = (acc.0 << 8 | acc.1 >> 56, acc.1 << 8 | UInt64(byte))
    })
}
