import Sodium

/// The random bytes a receiver puts in its advertisement and changes with every rotation (and
/// every time it registers the advertisement again), so that its tags change with them.
public struct DiscoverySalt: Hashable, Sendable {
    public let bytes: [UInt8]

    /// Nil unless `bytes` is `DiscoveryLayout.saltLength` long.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == DiscoveryLayout.saltLength else { return nil }
        self.bytes = Array(bytes)
    }

    /// A fresh salt.
    public static func random(using random: DiscoveryRandom = Random.bytes) -> DiscoverySalt {
        DiscoverySalt(checked: RandomDraw.bytes(DiscoveryLayout.saltLength, from: random))
    }

    private init(checked bytes: [UInt8]) { self.bytes = bytes }
}
