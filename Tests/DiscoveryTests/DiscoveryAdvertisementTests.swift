import Keys
import Sodium
import Testing
@testable import Discovery

@Suite struct DiscoveryAdvertisementTests {
    /// A receiver with `count` trusted senders: the receiver's keys and the senders' keys.
    func trustedSenders(_ count: Int) throws -> (receiverKeys: [DiscoveryKey], senderKeys: [DiscoveryKey]) {
        let receiver = Identity.generate()
        let senders = (0..<count).map { _ in Identity.generate() }
        return (
            try senders.map { try DiscoveryKey.forReceiver(identity: receiver, sender: $0.publicKey) },
            try senders.map { try DiscoveryKey.forSender(identity: $0, receiver: receiver.publicKey) })
    }

    @Test(arguments: 0...3)
    func upToThreeSendersUseSlotsAndAreAllListed(count: Int) throws {
        let (receiverKeys, senderKeys) = try trustedSenders(count)
        let bytes = DiscoveryAdvertisement.make(salt: .random(), keys: receiverKeys)
        #expect(bytes.count == 10)
        let advertisement = try DiscoveryAdvertisement.parse(bytes)
        #expect(advertisement.form == .slots)
        #expect(advertisement.bytes == bytes)
        #expect(advertisement.slots.count == 3)
        for key in senderKeys { #expect(advertisement.lists(key)) }
    }

    /// The parser and `lists` find a tag in every slot (advertisements put together by hand).
    @Test(arguments: 0..<3)
    func aTagIsFoundInEverySlot(position: Int) throws {
        let key = try randomPairKey()
        let salt = DiscoverySalt.random()
        var slots = (0..<3).map { _ in Random.bytes(2) }
        slots[position] = key.slotTag(salt: salt)
        let advertisement = try DiscoveryAdvertisement.parse([0x01] + salt.bytes + slots.flatMap { $0 })
        #expect(advertisement.lists(key))
        #expect(advertisement.slots.firstIndex(of: key.slotTag(salt: salt)) == position)
    }

    /// `make` puts a single sender's tag in each of the slots for some order: over 64 scripted
    /// sources (deterministic) every position is used, and every time the sender is listed.
    @Test func makeUsesEverySlotPosition() throws {
        let key = try DiscoveryKey.forReceiver(identity: try fixedIdentity("receiver"), sender: try fixedIdentity("sender").publicKey)
        let salt = try salt([0x01, 0x02, 0x03])
        var positions: Set<Int> = []
        for seed in 0..<64 {
            let random = ScriptedRandom(seed: "order \(seed)")
            let advertisement = try DiscoveryAdvertisement.parse(DiscoveryAdvertisement.make(salt: salt, keys: [key], random: random.bytes))
            #expect(advertisement.lists(key))
            if let position = advertisement.slots.firstIndex(of: key.slotTag(salt: salt)) { positions.insert(position) }
        }
        #expect(positions == [0, 1, 2])
    }

    /// Random keys against a receiver with three trusted senders. Each of the 3 slots matches a
    /// random key with probability 2^-16, so 10,000 keys match 10,000 × 3 / 65536 = 0.46 times on
    /// average; more than 6 matches happens with probability below 10^-6 (Poisson).
    @Test func keysThatAreNotTrustedDoNotMatch() throws {
        let (receiverKeys, senderKeys) = try trustedSenders(3)
        let advertisement = try DiscoveryAdvertisement.parse(DiscoveryAdvertisement.make(salt: .random(), keys: receiverKeys))
        var matches = 0
        for _ in 0..<10_000 where advertisement.lists(try randomPairKey()) { matches += 1 }
        #expect(matches <= 6)
        for key in senderKeys { #expect(advertisement.lists(key)) }
    }

    /// Same salt and keys, made again and again: the filler (and order) differ, the listed senders
    /// do not. (Five advertisements with the same 16-bit filler: probability 2^-64.)
    @Test(arguments: [0, 1, 2, 5])
    func fillerIsRandom(count: Int) throws {
        let (receiverKeys, senderKeys) = try trustedSenders(count)
        let salt = DiscoverySalt.random()
        let made = try (0..<5).map { _ in try DiscoveryAdvertisement.parse(DiscoveryAdvertisement.make(salt: salt, keys: receiverKeys)) }
        #expect(Set(made.map(\.body)).count > 1)
        for advertisement in made {
            #expect(advertisement.salt == salt && advertisement.form == made[0].form)
            for key in senderKeys { #expect(advertisement.lists(key)) }
        }
        guard count < 3 else { return }
        // Take the real tags out of the slots: what is left is the filler, and it changes.
        let fillers = made.map { advertisement in
            var rest = advertisement.slots
            for key in senderKeys {
                if let index = rest.firstIndex(of: key.slotTag(salt: salt)) { rest.remove(at: index) }
            }
            return rest
        }
        #expect(fillers.allSatisfy { $0.count == 3 - count })
        #expect(Set(fillers).count > 1)
    }

    /// Deterministic (fixed keys, salt and random source), so the counts below are exact.
    @Test func aKeyGivenTwiceCountsOnce() throws {
        let receiver = try fixedIdentity("receiver")
        let senders = try [fixedIdentity("sender 1"), fixedIdentity("sender 2")]
        let receiverKeys = try senders.map { try DiscoveryKey.forReceiver(identity: receiver, sender: $0.publicKey) }
        let keys = receiverKeys + receiverKeys + [receiverKeys[0]]
        let vectorSalt = try salt([0x01, 0x02, 0x03])
        let advertisement = try DiscoveryAdvertisement.parse(
            DiscoveryAdvertisement.make(salt: vectorSalt, keys: keys, random: ScriptedRandom(seed: "twice").bytes))
        #expect(advertisement.form == .slots)
        for key in receiverKeys {
            #expect(advertisement.slots.filter { $0 == key.slotTag(salt: vectorSalt) }.count == 1)
        }
        #expect(Set(advertisement.slots).count == 3)
    }

    @Test(arguments: [4, 8, 20])
    func moreSendersThanSlotsUseTheBloomFilter(count: Int) throws {
        let (receiverKeys, senderKeys) = try trustedSenders(count)
        let bytes = DiscoveryAdvertisement.make(salt: .random(), keys: receiverKeys)
        #expect(bytes.count == 10)
        let advertisement = try DiscoveryAdvertisement.parse(bytes)
        #expect(advertisement.form == .bloomFilter)
        #expect(advertisement.slots.isEmpty)
        for key in senderKeys { #expect(advertisement.lists(key)) }
        #expect(DiscoveryBloomFilter(bytes: advertisement.body).population <= 4 * max(count, 8))
    }

    /// Five trusted senders (padded to 8 entries of 4 bits in 48): a random key matches with
    /// probability E[(set bits / 48)^4] ≈ 0.060 (docs/drafts/discovery.md). 400 advertisements with
    /// fresh salts × 50 random keys = 20,000 trials: mean 1,200, standard deviation well under 100
    /// even counting the spread between filters; the bounds 2% and 10% are more than 8 deviations out.
    @Test func bloomFilterFalseMatchRate() throws {
        let (receiverKeys, _) = try trustedSenders(5)
        let strangers = try (0..<50).map { _ in try randomPairKey() }
        var matches = 0, trials = 0
        for _ in 0..<400 {
            let advertisement = try DiscoveryAdvertisement.parse(DiscoveryAdvertisement.make(salt: .random(), keys: receiverKeys))
            for key in strangers {
                trials += 1
                if advertisement.lists(key) { matches += 1 }
            }
        }
        let rate = Double(matches) / Double(trials)
        #expect(rate < 0.10)
        #expect(rate > 0.02)
    }

    /// Padding: 4 and 8 trusted senders set as many bits on average (about 23.5 of 48); unpadded, 4
    /// senders would set about 13.6. 300 filters each: the means' standard error is about 0.15.
    @Test func bloomPaddingHidesTheNumberOfSenders() throws {
        func meanPopulation(_ count: Int) throws -> Double {
            let keys = try (0..<count).map { _ in try randomPairKey() }
            var total = 0
            for _ in 0..<300 {
                let advertisement = try DiscoveryAdvertisement.parse(DiscoveryAdvertisement.make(salt: .random(), keys: keys))
                total += DiscoveryBloomFilter(bytes: advertisement.body).population
            }
            return Double(total) / 300
        }
        let four = try meanPopulation(4), eight = try meanPopulation(8)
        #expect(abs(four - eight) < 1.5)
        #expect((21.0...26.0).contains(four))
    }

    /// Every truncation and extension of a valid advertisement, and every header that names no
    /// form, is refused with its own error; nothing else is.
    @Test func parseRejectsMalformedInput() throws {
        let valid = DiscoveryAdvertisement.make(salt: .random(), keys: [try randomPairKey()])
        for length in 0..<valid.count {
            #expect(throws: DiscoveryError.wrongLength(length)) { try DiscoveryAdvertisement.parse(valid.prefix(length)) }
            #expect(throws: DiscoveryError.wrongLength(length)) { try DiscoveryAdvertisement.parse(valid.suffix(length)) }
        }
        for extra in [1, 2, 21, 300] {
            #expect(throws: DiscoveryError.wrongLength(10 + extra)) {
                try DiscoveryAdvertisement.parse(valid + [UInt8](repeating: 0, count: extra))
            }
        }
        for header in UInt8.min...UInt8.max {
            var bytes = valid
            bytes[0] = header
            if header == 0x01 || header == 0x02 {
                #expect(try DiscoveryAdvertisement.parse(bytes).form.rawValue == header)
            } else {
                #expect(throws: DiscoveryError.unknownForm(header)) { try DiscoveryAdvertisement.parse(bytes) }
            }
        }
    }

    /// Fixed keys, salt and random source: the exact service data, for a second implementation.
    /// (Only `make`'s use of the random source is fixed here; the tags are checked step by step in
    /// DiscoveryKeyTests.fixedVector.)
    @Test func fixedAdvertisementVectors() throws {
        let receiver = try fixedIdentity("receiver")
        let senders = try (1...5).map { try fixedIdentity("sender \($0)") }
        let keys = try senders.map { try DiscoveryKey.forReceiver(identity: receiver, sender: $0.publicKey) }
        let vectorSalt = try salt([0x01, 0x02, 0x03])
        let one = DiscoveryAdvertisement.make(salt: vectorSalt, keys: [keys[0]], random: ScriptedRandom(seed: "vector").bytes)
        let five = DiscoveryAdvertisement.make(salt: vectorSalt, keys: keys, random: ScriptedRandom(seed: "vector").bytes)
        #expect(hex(one) == "01010203ac03c463b542")
        #expect(hex(five) == "02010203c00077ce8363")
        let senderSide = try DiscoveryKey.forSender(identity: senders[0], receiver: receiver.publicKey)
        #expect(try DiscoveryAdvertisement.parse(one).lists(senderSide))
        #expect(try DiscoveryAdvertisement.parse(five).lists(senderSide))
    }
}
