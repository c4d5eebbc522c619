import Pipeline
import Record
import Sodium
import Testing

/// A trivial codec for the layer above records: UTF-8 text, where "bye" goes in a final record.
struct TextCodec: Codec {
    typealias Upper = String
    typealias Lower = Record

    enum TextError: Error { case notUTF8 }

    mutating func encode(_ unit: String, into output: inout [Record]) throws {
        output.append(Record(plaintext: Array(unit.utf8), isFinal: unit == "bye"))
    }

    mutating func decode(_ unit: Record, into output: inout [String]) throws {
        guard let text = String(validating: unit.plaintext, as: UTF8.self) else { throw TextError.notUTF8 }
        output.append(text)
    }
}

@Suite struct StackedRecordTests {
    @Test func textOverRecordsComposesAndRoundTrips() throws {
        let aToB = SecureBytes.random(count: 32), bToA = SecureBytes.random(count: 32)
        // The compiler checks the fit: TextCodec.Lower == RecordChannel.Upper == Record.
        var alice: Stacked<TextCodec, RecordChannel> = TextCodec().stacked(on: RecordChannel(sendKey: aToB, receiveKey: bToA))
        var bob = TextCodec().stacked(on: RecordChannel(sendKey: bToA, receiveKey: aToB))

        var wire: [[UInt8]] = []
        for line in ["hello", "", "ünïcødé", "bye"] { try alice.encode(line, into: &wire) }
        #expect(wire.count == 4)
        #expect(wire.last?.first == 0x01)

        var heard: [String] = []
        for datagram in wire { try bob.decode(datagram, into: &heard) }
        #expect(heard == ["hello", "", "ünïcødé", "bye"])
        #expect(bob.bottom.opener.isFinished)

        var tampered = wire[0]
        tampered[tampered.count - 1] ^= 1
        var fresh = TextCodec().stacked(on: RecordChannel(sendKey: bToA, receiveKey: aToB))
        #expect(throws: RecordError.authenticationFailed) { try fresh.decode(tampered, into: &heard) }
    }
}
