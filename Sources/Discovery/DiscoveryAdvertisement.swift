import Sodium

/// The service data a receiver advertises so that the senders it trusts recognise it without
/// connecting, and nobody else learns whose it is or links two of its salts
/// (docs/drafts/discovery.md). Layout: `DiscoveryLayout`.
///
/// A match is a hint, never an authentication: anyone can replay a receiver's advertisement, and
/// 1 in 2^16 random keys matches a slot. Only the handshake says who the receiver is.
public struct DiscoveryAdvertisement: Equatable, Sendable {
    public let form: DiscoveryForm
    public let salt: DiscoverySalt
    /// `DiscoveryLayout.bodyLength` bytes: the slots, or the Bloom filter.
    public let body: [UInt8]

    /// The service data, as advertised.
    public var bytes: [UInt8] { [form.rawValue] + salt.bytes + body }

    /// The slots form's slots, in advertised order (empty for the Bloom filter form).
    public var slots: [[UInt8]] {
        guard form == .slots else { return [] }
        return stride(from: 0, to: body.count, by: DiscoveryLayout.tagLength).map {
            Array(body[$0..<$0 + DiscoveryLayout.tagLength])
        }
    }

    /// The receiver's side: the service data listing the senders of `keys` under `salt`.
    ///
    /// - At most `slotCount` distinct senders: the slots form, each sender's tag in a slot, the other
    ///   slots random filler, all in random order, so the number of senders does not show.
    /// - More: the Bloom filter form, each sender's positions set, padded with random entries to
    ///   `bloomPaddedEntries`, so up to that many the number of set bits does not depend on the
    ///   number of senders.
    ///
    /// A key given twice counts once. `random` supplies filler, padding and the order.
    public static func make(salt: DiscoverySalt, keys: [DiscoveryKey], random: DiscoveryRandom = Random.bytes) -> [UInt8] {
        let distinct = distinctKeys(keys)
        if distinct.count <= DiscoveryLayout.slotCount {
            var slots = distinct.map { $0.slotTag(salt: salt) }
            while slots.count < DiscoveryLayout.slotCount {
                slots.append(RandomDraw.bytes(DiscoveryLayout.tagLength, from: random))
            }
            let body = RandomDraw.shuffled(slots, from: random).flatMap { $0 }
            return DiscoveryAdvertisement(form: .slots, salt: salt, body: body).bytes
        }
        var filter = DiscoveryBloomFilter()
        for key in distinct { filter.insert(key.bloomPositions(salt: salt)) }
        for _ in distinct.count..<max(distinct.count, DiscoveryLayout.bloomPaddedEntries) {
            filter.insert(DiscoveryBloomFilter.positions(fromDigest: RandomDraw.bytes(2 * DiscoveryLayout.bloomHashCount, from: random)))
        }
        return DiscoveryAdvertisement(form: .bloomFilter, salt: salt, body: filter.bytes).bytes
    }

    /// The sender's side: service data from the radio (the value BlueZ shows under
    /// `TransferServiceUUID` in a device's `ServiceData`), checked for length and form.
    public static func parse(_ bytes: some Collection<UInt8>) throws(DiscoveryError) -> DiscoveryAdvertisement {
        let bytes = Array(bytes)
        guard bytes.count == DiscoveryLayout.serviceDataLength else { throw .wrongLength(bytes.count) }
        guard let form = DiscoveryForm(rawValue: bytes[0]) else { throw .unknownForm(bytes[0]) }
        let saltEnd = DiscoveryLayout.headerLength + DiscoveryLayout.saltLength
        guard let salt = DiscoverySalt(bytes: bytes[DiscoveryLayout.headerLength..<saltEnd]) else {
            throw .wrongLength(bytes.count)
        }
        return DiscoveryAdvertisement(form: form, salt: salt, body: Array(bytes[saltEnd...]))
    }

    /// Whether this advertisement lists the pair of `key`: its tag in a slot, or all its bits set.
    public func lists(_ key: DiscoveryKey) -> Bool {
        switch form {
        case .slots:
            let tag = key.slotTag(salt: salt)
            return slots.contains(tag)
        case .bloomFilter:
            return DiscoveryBloomFilter(bytes: body).contains(key.bloomPositions(salt: salt))
        }
    }

    /// `keys` without repeats (equal keys give equal tags, and two equal slots would stand out).
    private static func distinctKeys(_ keys: [DiscoveryKey]) -> [DiscoveryKey] {
        var distinct: [DiscoveryKey] = []
        for key in keys where !distinct.contains(key) { distinct.append(key) }
        return distinct
    }
}
