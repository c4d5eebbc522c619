import Record
import Sodium
import Testing

/// Text over a record channel, end to end: both ends built from swapped keys, "bye" in the final record.
@Suite struct RecordChannelRoundTripTests {
    @Test func textOverRecordsRoundTrips() throws {
        let aToB = SecureBytes.random(count: 32), bToA = SecureBytes.random(count: 32)
        var alice = RecordChannel(sendKey: aToB, receiveKey: bToA)
        var bob = RecordChannel(sendKey: bToA, receiveKey: aToB)

        var wire: [[UInt8]] = []
        for line in ["hello", "", "ünïcødé", "bye"] {
            try alice.encode(Record(plaintext: Array(line.utf8), isFinal: line == "bye"), into: &wire)
        }
        #expect(wire.count == 4)
        #expect(wire.last?.first == 0x01)

        var heard: [Record] = []
        for datagram in wire { try bob.decode(datagram, into: &heard) }
        #expect(heard.map { String(decoding: $0.plaintext, as: UTF8.self) } == ["hello", "", "ünïcødé", "bye"])
        #expect(heard.map(\.isFinal) == [false, false, false, true])
        #expect(bob.opener.isFinished)

        var tampered = wire[0]
        tampered[tampered.count - 1] ^= 1
        var fresh = RecordChannel(sendKey: bToA, receiveKey: aToB)
        #expect(throws: RecordError.authenticationFailed) { try fresh.decode(tampered, into: &heard) }
    }
}
