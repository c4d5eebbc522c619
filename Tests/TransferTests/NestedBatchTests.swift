import Testing
@testable import Transfer

/// Issue 20: one record of batches nested inside each other. The parser used to parse each inner
/// message before it checked that a batch may not hold a batch, copying the rest of the record at
/// every level: a 65,518-byte record went 21,838 levels deep and took a receiver from 16 MB to
/// 712 MB. A batch is now judged by its inner type byte first, and read from slices.

/// Batches nested `depth` deep around one `data` byte, built in one pass (outermost first).
func nestedBatches(depth: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(3 * depth + 2)
    for level in 0..<depth {
        let length = 3 * (depth - 1 - level) + 2
        bytes += [TransferMessage.Kind.batch.rawValue, UInt8(length >> 8), UInt8(length & 0xFF)]
    }
    return bytes + [TransferMessage.Kind.data.rawValue, 0x2A]
}

/// The longest record plaintext: a 65535-byte message less the record's 17 bytes (protocol.md §4).
let longestRecordPlaintext = 65_518

@Test(arguments: [2, 3, 100, (longestRecordPlaintext - 2) / 3])
func aBatchInABatchIsRefusedByItsTypeByte(depth: Int) {
    let bytes = nestedBatches(depth: depth)
    #expect(bytes.count <= longestRecordPlaintext)
    #expect(throws: TransferMessageError.badField) { try TransferMessage(decoding: bytes) }
    // The same from a slice at an offset (how a record's plaintext may arrive).
    #expect(throws: TransferMessageError.badField) { try TransferMessage(decoding: ([0] + bytes)[1...]) }
}

@Test func aDeeplyNestedBatchCostsNoMoreThanAShallowOne() {
    let deep = nestedBatches(depth: (longestRecordPlaintext - 2) / 3)
    #expect(deep.count == 65_516)   // 21,838 levels of 3 bytes around a 2-byte data message
    // The old parser needed seconds and hundreds of MB for one of these (or ran out of stack);
    // refusing it now reads four bytes. 1,000 of them in well under a second, even unoptimised.
    let clock = ContinuousClock()
    var refused = 0
    let elapsed = clock.measure {
        for _ in 0..<1_000 {
            do { _ = try TransferMessage(decoding: deep) } catch { if (error as? TransferMessageError) == .badField { refused += 1 } }
        }
    }
    #expect(refused == 1_000)
    #expect(elapsed < .seconds(1), "1,000 refusals took \(elapsed)")
}

@Test func aBatchLaterInTheListIsRefusedToo() {
    let inner = nestedBatches(depth: 5)
    let bytes: [UInt8] = [0x0E, 0, 2, 0x03, 0x2A, UInt8(inner.count >> 8), UInt8(inner.count & 0xFF)] + inner
    #expect(throws: TransferMessageError.badField) { try TransferMessage(decoding: bytes) }
}

/// A batch as long as a record allows, of thousands of small messages, still parses (from slices
/// of the one record) and round trips.
@Test func aLongBatchOfSmallMessagesRoundTrips() throws {
    let message = TransferMessage.batch(Array(repeating: .data([7]), count: (longestRecordPlaintext - 1) / 4))
    let bytes = message.encoded()
    #expect(bytes.count <= longestRecordPlaintext)
    #expect(try TransferMessage(decoding: bytes) == message)
    #expect(try TransferMessage(decoding: ([0, 0] + bytes)[2...]) == message)
}

@Test func anEmptyBatchSaysSo() {
    #expect(throws: TransferMessageError.emptyBatch) { try TransferMessage(decoding: [0x0E]) }
    #expect(TransferMessageError.emptyBatch.description == "an empty batch message")
    #expect(TransferMessageError.emptyData.description != TransferMessageError.emptyBatch.description)
}
