import Pipeline
@testable import Record
import Sodium
import Testing

/// Seals `records` with a fresh sealer and returns the wire bytes, one array per record.
func seal(_ records: [Record], key: SecureBytes, rekeyAfter: UInt64 = rekeyAfterRecords) throws -> [[UInt8]] {
    var sealer = RecordSealer(key: key, rekeyAfter: rekeyAfter)
    var wire: [[UInt8]] = []
    for record in records { try sealer.encode(record, into: &wire) }
    return wire
}

/// Opens `wire` in order with one opener; returns what came out before the first error and that error.
func open(_ wire: [[UInt8]], key: SecureBytes, rekeyAfter: UInt64 = rekeyAfterRecords) -> (records: [Record], error: RecordError?) {
    var opener = RecordOpener(key: key, rekeyAfter: rekeyAfter)
    var records: [Record] = []
    for bytes in wire {
        do { try opener.decode(bytes, into: &records) } catch { return (records, error) }
    }
    return (records, nil)
}

/// The record the spec describes, computed straight from XChaCha20-Poly1305 (protocol.md §4).
func specRecord(_ plaintext: [UInt8], final: Bool, counter: UInt64, key: SecureBytes) throws -> [UInt8] {
    let header: UInt8 = final ? 1 : 0
    var nonce = [UInt8](repeating: 0, count: 16)
    nonce.appendBigEndian(counter)
    return [header] + (try AEAD.xChaCha20Poly1305IETF.seal(key: key, nonce: nonce, plaintext: plaintext, associatedData: [header]))
}

@Suite struct RecordLayerTests {
    let key = SecureBytes.random(count: 32)

    @Test(arguments: [0, 1, 4095, 4096, 4097])
    func roundTrips(size: Int) throws {
        let records = [Record(plaintext: Random.bytes(size)), Record(plaintext: Random.bytes(size), isFinal: true)]
        let wire = try seal(records, key: key)
        #expect(wire.map(\.count) == [size + 17, size + 17])
        let (opened, error) = open(wire, key: key)
        #expect(error == nil)
        #expect(opened == records)
    }

    @Test func wireFormatMatchesTheSpec() throws {
        let records = [Record(plaintext: Array("one".utf8)), Record(plaintext: Array("two".utf8)),
                       Record(plaintext: [], isFinal: true)]
        let wire = try seal(records, key: key)
        for (counter, record) in records.enumerated() {
            #expect(wire[counter] == (try specRecord(record.plaintext, final: record.isFinal, counter: UInt64(counter), key: key)),
                    "record \(counter)")
        }
        #expect(wire[2][0] == 0x01)
        #expect(wire[0][0] == 0x00)
    }

    @Test func everyTamperedByteFailsAuthentication() throws {
        let wire = try seal([Record(plaintext: Array("hello records".utf8), isFinal: false)], key: key)[0]
        for index in wire.indices {
            var tampered = wire
            tampered[index] ^= 0x01   // at index 0 this flips the final bit, which is associated data
            #expect(open([tampered], key: key).error == .authenticationFailed, "byte \(index)")
        }
        #expect(open([wire], key: SecureBytes.random(count: 32)).error == .authenticationFailed)
    }

    @Test func replayedReorderedAndDroppedRecordsFail() throws {
        let wire = try seal((0..<4).map { Record(plaintext: [UInt8($0)]) }, key: key)
        let replayed = open([wire[0], wire[1], wire[1]], key: key)
        #expect(replayed.records.count == 2 && replayed.error == .authenticationFailed)
        let reordered = open([wire[0], wire[2], wire[1]], key: key)
        #expect(reordered.records.count == 1 && reordered.error == .authenticationFailed)
        let dropped = open([wire[0], wire[1], wire[3]], key: key)
        #expect(dropped.records.count == 2 && dropped.error == .authenticationFailed)
        #expect(open(wire, key: key).error == nil)
    }

    @Test func nothingIsAcceptedAfterFinal() throws {
        let wire = try seal([Record(plaintext: [1], isFinal: true)], key: key)
        var opener = RecordOpener(key: key)
        var out: [Record] = []
        try opener.decode(wire[0], into: &out)
        #expect(opener.isFinished)
        #expect(throws: RecordError.recordAfterFinal) { try opener.decode(wire[0], into: &out) }
        #expect(throws: RecordError.recordAfterFinal) { try opener.decode([], into: &out) }

        var sealer = RecordSealer(key: key)
        var sealed: [[UInt8]] = []
        try sealer.encode(Record(plaintext: [], isFinal: true), into: &sealed)
        #expect(throws: RecordError.recordAfterFinal) { try sealer.encode(Record(plaintext: [2]), into: &sealed) }
        #expect(sealed.count == 1)
    }

    @Test(arguments: 1...7)
    func reservedHeaderBitsAreRejected(bit: Int) throws {
        var wire = try seal([Record(plaintext: [1, 2, 3])], key: key)[0]
        wire[0] |= UInt8(1) << UInt8(bit)
        #expect(open([wire], key: key).error == .reservedBitsSet)
    }

    @Test func truncatedInputOfEveryLengthBelow17() throws {
        let wire = try seal([Record(plaintext: [])], key: key)[0]
        #expect(wire.count == 17)
        for length in 0..<17 {
            #expect(open([Array(wire.prefix(length))], key: key).error == .truncated, "length \(length)")
        }
        #expect(open([wire], key: key).error == nil)
    }

    @Test func rekeyEveryThreeRecords() throws {
        let records = (0..<10).map { Record(plaintext: Array("record \($0)".utf8), isFinal: $0 == 9) }
        let rekeyed = try seal(records, key: key, rekeyAfter: 3)
        let (opened, error) = open(rekeyed, key: key, rekeyAfter: 3)
        #expect(error == nil)
        #expect(opened == records)

        // Records 1-3 use the first key; record 4 (counter 3) uses the next one.
        let unrekeyed = try seal(records, key: key)
        #expect(Array(rekeyed[0..<3]) == Array(unrekeyed[0..<3]))
        #expect(rekeyed[3] != unrekeyed[3])
        let nextKey = BLAKE2b.secretHash(Array("blesend/1 rekey".utf8), outputLength: 32, key: key)
        #expect(rekeyed[3] == (try specRecord(records[3].plaintext, final: false, counter: 3, key: nextKey)))
        let thirdKey = BLAKE2b.secretHash(Array("blesend/1 rekey".utf8), outputLength: 32, key: nextKey)
        #expect(rekeyed[6] == (try specRecord(records[6].plaintext, final: false, counter: 6, key: thirdKey)))

        // An opener on a different schedule fails at the first record after the rekey.
        let mismatched = open(rekeyed, key: key, rekeyAfter: 4)
        #expect(mismatched.records.count == 3 && mismatched.error == .authenticationFailed)
    }

    @Test func sizeLimits() throws {
        var sealer = RecordSealer(key: key)
        var wire: [[UInt8]] = []
        #expect(throws: RecordError.tooLarge) { try sealer.encode(Record(plaintext: [UInt8](repeating: 0, count: 65535 - 16)), into: &wire) }
        try sealer.encode(Record(plaintext: [UInt8](repeating: 0, count: 65535 - 17)), into: &wire)
        #expect(wire[0].count == 65535)
        #expect(open(wire, key: key).error == nil)

        var small = RecordOpener(key: key, maxPlaintext: 100)
        var out: [Record] = []
        #expect(throws: RecordError.tooLarge) { try small.decode(wire[0], into: &out) }
    }

    @Test func counterNeverWraps() throws {
        var sealer = RecordSealer(key: key, rekeyAfter: rekeyAfterRecords, startingCounter: .max - 1)
        var opener = RecordOpener(key: key, rekeyAfter: rekeyAfterRecords, startingCounter: .max - 1)
        var wire: [[UInt8]] = []
        var out: [Record] = []
        try sealer.encode(Record(plaintext: [1]), into: &wire)
        try opener.decode(wire[0], into: &out)
        #expect(out == [Record(plaintext: [1])])
        #expect(throws: RecordError.counterExhausted) { try sealer.encode(Record(plaintext: [2]), into: &wire) }
        #expect(throws: RecordError.counterExhausted) { try opener.decode(wire[0], into: &out) }
    }

    @Test func errorsAreSticky() throws {
        let wire = try seal([Record(plaintext: [1]), Record(plaintext: [2])], key: key)
        var opener = RecordOpener(key: key)
        var out: [Record] = []
        #expect(throws: RecordError.truncated) { try opener.decode([0], into: &out) }
        #expect(throws: RecordError.truncated) { try opener.decode(wire[0], into: &out) }
        #expect(out.isEmpty)
    }

    @Test func channelTalksBothWays() throws {
        let aToB = SecureBytes.random(count: 32), bToA = SecureBytes.random(count: 32)
        var alice = RecordChannel(sendKey: aToB, receiveKey: bToA, rekeyAfter: 2)
        var bob = RecordChannel(sendKey: bToA, receiveKey: aToB, rekeyAfter: 2)
        for n in 0..<7 {
            var wire: [[UInt8]] = []
            var received: [Record] = []
            try alice.encode(Record(plaintext: [UInt8(n)]), into: &wire)
            try bob.encode(Record(plaintext: [UInt8(n + 100)]), into: &wire)
            try bob.decode(wire[0], into: &received)
            try alice.decode(wire[1], into: &received)
            #expect(received == [Record(plaintext: [UInt8(n)]), Record(plaintext: [UInt8(n + 100)])])
        }
        // A record looped back to its sender fails: the directions use different keys.
        var wire: [[UInt8]] = []
        var received: [Record] = []
        try alice.encode(Record(plaintext: [9]), into: &wire)
        #expect(throws: RecordError.authenticationFailed) { try alice.decode(wire[0], into: &received) }
    }
}
