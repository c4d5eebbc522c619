import Keys
import Sodium
@testable import Discovery

/// Test-only keys: BLAKE2b-256 of `"blesend discovery vectors: " + label` as the X25519 secret,
/// so anyone can re-derive them (as Sources/Tools/WireVectors/FixedInputs.swift does).
func fixedSecret(_ label: String) -> [UInt8] {
    BLAKE2b.hash(Array("blesend discovery vectors: \(label)".utf8), outputLength: 32)
}

func fixedIdentity(_ label: String) throws -> Identity {
    try Identity(secretKey: SecureBytes(copying: fixedSecret(label)))
}

func salt(_ bytes: [UInt8]) throws -> DiscoverySalt {
    guard let salt = DiscoverySalt(bytes: bytes) else { throw TestSetupError("not a salt: \(bytes)") }
    return salt
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
}

func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return result
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A deterministic random source: BLAKE2b-256 of seed ‖ counter, as many blocks as needed.
final class ScriptedRandom: @unchecked Sendable {
    private let seed: [UInt8]
    private var counter: UInt32 = 0
    private var pool: [UInt8] = []

    init(seed: String) { self.seed = Array(seed.utf8) }

    func bytes(_ count: Int) -> [UInt8] {
        while pool.count < count {
            let block = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
            pool += BLAKE2b.hash(seed + block, outputLength: 32)
            counter += 1
        }
        defer { pool.removeFirst(count) }
        return Array(pool.prefix(count))
    }
}

/// A fresh random pair key between a random receiver and a random sender (neither kept).
func randomPairKey() throws -> DiscoveryKey {
    try DiscoveryKey.forSender(identity: Identity.generate(), receiver: Identity.generate().publicKey)
}
