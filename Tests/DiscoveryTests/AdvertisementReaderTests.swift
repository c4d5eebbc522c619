import Keys
import Testing
@testable import Discovery

/// `blesend scan`'s reading of an advertisement, as a table: each row is what a device
/// advertised (service data under the transfer service UUID, whether the UUID is in its list) and
/// the mode the scan shows for it. We are `us`; we pinned `alice` and `bob`.
@Suite struct AdvertisementReaderTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let serviceData: [UInt8]?
        let listsService: Bool
        let expected: AdvertisedMode?
        var testDescription: String { name }
    }

    static let us = try! fixedIdentity("scan: us")
    static let alice = try! fixedIdentity("scan: alice")
    static let bob = try! fixedIdentity("scan: bob")
    static let stranger = try! fixedIdentity("scan: a receiver nobody pinned")
    static let otherSender = try! fixedIdentity("scan: another sender")
    static let pinned = [TrustStore.Peer(name: "alice", key: alice.publicKey), TrustStore.Peer(name: "bob", key: bob.publicKey)]
    static let vectorSalt = try! salt([0x5A, 0x17, 0xC3])

    /// The service data `receiver` advertises when it trusts `senders` (slots up to 3, else Bloom).
    static func listing(_ receiver: Identity, _ senders: [Identity], seed: String) -> [UInt8] {
        let keys = senders.map { try! DiscoveryKey.forReceiver(identity: receiver, sender: $0.publicKey) }
        return DiscoveryAdvertisement.make(salt: vectorSalt, keys: keys, random: ScriptedRandom(seed: seed).bytes)
    }

    static let fillers = (0..<4).map { try! fixedIdentity("scan: filler \($0)") }

    static let rows: [Row] = [
        Row(name: "pairing with a name", serviceData: PairingAdvertisement(name: "kitchen").bytes, listsService: false,
            expected: .pairing(name: "kitchen")),
        Row(name: "pairing with a 9-byte name, and the UUID listed too", serviceData: PairingAdvertisement(name: "laptop-01").bytes,
            listsService: true, expected: .pairing(name: "laptop-01")),
        Row(name: "pairing with junk bytes: none is a name byte", serviceData: [0x03, 0xFF, 0x00, 0x80, 0x01, 0x7F, 0x20, 0x2F, 0xC3, 0xA9],
            listsService: false, expected: .pairing(name: nil)),
        Row(name: "pairing with junk among a name's bytes: the name bytes are kept",
            serviceData: [0x03, 0x61, 0x1B, 0x62, 0x0A, 0x63, 0x00, 0x00, 0x00, 0x00], listsService: false, expected: .pairing(name: "abc")),
        Row(name: "private, slots, listing us under alice's key", serviceData: listing(alice, [otherSender, us], seed: "alice slots"),
            listsService: false, expected: .privateDiscovery(.pinned(pinned[0]))),
        Row(name: "private, Bloom filter, listing us under bob's key", serviceData: listing(bob, [us] + fillers, seed: "bob bloom"),
            listsService: false, expected: .privateDiscovery(.pinned(pinned[1]))),
        Row(name: "private, listing another sender only", serviceData: listing(alice, [otherSender], seed: "alice other"),
            listsService: false, expected: .privateDiscovery(.nobodyWeKnow)),
        Row(name: "private, listing us, from a receiver we did not pin", serviceData: listing(stranger, [us], seed: "stranger"),
            listsService: false, expected: .privateDiscovery(.nobodyWeKnow)),
        Row(name: "plain: the UUID listed, no service data", serviceData: nil, listsService: true, expected: .plain),
        Row(name: "not a receiver: neither", serviceData: nil, listsService: false, expected: nil),
        Row(name: "unknown header (a later layout): plain", serviceData: [0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9], listsService: false,
            expected: .plain),
        Row(name: "wrong length, a form's header: plain", serviceData: [0x01, 1, 2, 3, 4, 5, 6, 7, 8], listsService: false, expected: .plain),
        Row(name: "wrong length, the pairing header: plain", serviceData: PairingAdvertisement(name: "kitchen").bytes + [0], listsService: true,
            expected: .plain),
        Row(name: "empty service data: plain", serviceData: [], listsService: false, expected: .plain),
    ]

    @Test(arguments: rows)
    func readsTheMode(_ row: Row) {
        let reader = AdvertisementReader(identity: Self.us, receivers: Self.pinned)
        #expect(reader.mode(serviceData: row.serviceData, listsService: row.listsService) == row.expected)
    }

    /// Without a key of ours nothing is matched: private data reads as unchecked; the rest as before.
    @Test(arguments: rows)
    func withoutOurKeyPrivateIsUnchecked(_ row: Row) {
        let reader = AdvertisementReader(identity: nil, receivers: Self.pinned)
        let expected: AdvertisedMode? = if case .privateDiscovery = row.expected { .privateDiscovery(.unchecked) } else { row.expected }
        #expect(reader.mode(serviceData: row.serviceData, listsService: row.listsService) == expected)
    }

    /// With nobody pinned, a receiver listing us is one we do not know.
    @Test func withNobodyPinnedAListingIsNobodyWeKnow() {
        let reader = AdvertisementReader(identity: Self.us, receivers: [])
        #expect(reader.mode(serviceData: Self.listing(Self.alice, [Self.us], seed: "alone"), listsService: false)
            == .privateDiscovery(.nobodyWeKnow))
    }

    @Test func theWordsShown() {
        #expect([AdvertisedMode.pairing(name: nil), .privateDiscovery(.unchecked), .plain].map(\.word) == ["pairing", "private", "plain"])
    }
}
