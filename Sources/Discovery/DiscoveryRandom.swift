import Sodium

/// Where salts, filler and the order of slots come from: a function that returns that many random
/// bytes. `Random.bytes` (libsodium's generator) in the product; tests pass a scripted one.
public typealias DiscoveryRandom = (Int) -> [UInt8]

enum RandomDraw {
    /// `count` bytes from `random`, which must return exactly that many (it is the programmer's).
    static func bytes(_ count: Int, from random: DiscoveryRandom) -> [UInt8] {
        let drawn = random(count)
        precondition(drawn.count == count, "a DiscoveryRandom returned \(drawn.count) bytes instead of \(count)")
        return drawn
    }

    /// A number in `0..<bound` from 8 random bytes, reduced modulo `bound`. The bias is below
    /// bound / 2^64 (for the bounds used here, at most 8: under 5e-19), and a scripted source can
    /// never make this loop, as rejection sampling could.
    static func index(below bound: Int, from random: DiscoveryRandom) -> Int {
        precondition(bound > 0)
        let value = bytes(8, from: random).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(value % UInt64(bound))
    }

    /// `entries` in an order drawn from `random` (Fisher-Yates).
    static func shuffled<T>(_ entries: [T], from random: DiscoveryRandom) -> [T] {
        var entries = entries
        var last = entries.count - 1
        while last > 0 {
            entries.swapAt(last, index(below: last + 1, from: random))
            last -= 1
        }
        return entries
    }
}
