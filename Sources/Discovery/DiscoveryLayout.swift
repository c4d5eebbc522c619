/// The numbers of private discovery, version 1 (docs/drafts/discovery.md), in one place and named
/// as in the text.
///
/// The service data is exactly `serviceDataLength` bytes: what fits next to the Flags (3 bytes)
/// in a 31-byte legacy advertisement once the 128-bit service data header (2 + 16 bytes) is paid:
///
/// ```
/// header (1) | salt (3) | body (6)
/// slots form:        body = 3 slots of 2 bytes, each a sender's tag or random filler, in random order
/// Bloom filter form: body = 48 bits; each entry sets 4 of them (bit 0 is the first byte's top bit)
/// ```
public enum DiscoveryLayout {
    /// The BLAKE2b message that turns the pair's X25519 result (the BLAKE2b key) into the pair key.
    public static let pairKeyLabel: [UInt8] = Array("blesend/1 discovery".utf8)
    /// Bytes in the pair key `K`.
    public static let pairKeyLength = 32
    /// Bytes in the salted digest `BLAKE2b(key: K, message: header ‖ salt)` that tags and Bloom
    /// positions are cut from (16 is BLAKE2b's shortest output in libsodium).
    public static let digestLength = 16

    /// The whole service data.
    public static let serviceDataLength = 10
    public static let headerLength = 1
    public static let saltLength = 3
    public static let bodyLength = 6

    /// Slots form: slots, and bytes per tag (a random key matches one slot with probability 2^-16).
    public static let slotCount = 3
    public static let tagLength = 2

    /// Bloom filter form: bits in the filter, and bits each entry sets.
    public static let bloomBits = 48
    public static let bloomHashCount = 4
    /// Entries a Bloom filter always holds: the receiver's trusted senders, padded with random
    /// entries up to this many, so the number of set bits does not tell how many senders there are
    /// (up to this many).
    public static let bloomPaddedEntries = 8
}
