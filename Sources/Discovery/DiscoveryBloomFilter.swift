/// The Bloom filter form's body: `DiscoveryLayout.bloomBits` bits, bit 0 the top bit of the first
/// byte. An entry is `bloomHashCount` bit positions; it is listed when all of them are set.
struct DiscoveryBloomFilter: Equatable {
    private(set) var bytes: [UInt8]

    init() { bytes = [UInt8](repeating: 0, count: DiscoveryLayout.bloomBits / 8) }

    init(bytes: [UInt8]) {
        precondition(bytes.count == DiscoveryLayout.bloomBits / 8)
        self.bytes = bytes
    }

    mutating func insert(_ positions: [Int]) {
        for position in positions { bytes[position / 8] |= Self.mask(position) }
    }

    func contains(_ positions: [Int]) -> Bool {
        positions.allSatisfy { bytes[$0 / 8] & Self.mask($0) != 0 }
    }

    /// Bits set (what an observer can count).
    var population: Int { bytes.reduce(0) { $0 + $1.nonzeroBitCount } }

    private static func mask(_ position: Int) -> UInt8 { 0x80 >> UInt8(position % 8) }

    /// `bloomHashCount` positions from `2 * bloomHashCount` bytes (a digest, or random bytes for a
    /// padding entry): each pair of bytes as a big-endian `u16`, modulo `bloomBits`.
    static func positions(fromDigest digest: [UInt8]) -> [Int] {
        precondition(digest.count >= 2 * DiscoveryLayout.bloomHashCount)
        return (0..<DiscoveryLayout.bloomHashCount).map { index in
            (Int(digest[2 * index]) << 8 | Int(digest[2 * index + 1])) % DiscoveryLayout.bloomBits
        }
    }
}
