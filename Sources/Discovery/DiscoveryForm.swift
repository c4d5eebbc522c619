/// The header byte of the service data: which form the body has. Every other value is not a
/// version 1 discovery advertisement (`DiscoveryError.unknownForm`); later layouts get new values.
public enum DiscoveryForm: UInt8, Sendable, Equatable, CaseIterable {
    /// A list of `DiscoveryLayout.slotCount` tags: the receiver trusts at most that many senders.
    case slots = 0x01
    /// A Bloom filter: the receiver trusts more senders than there are slots.
    case bloomFilter = 0x02
}
