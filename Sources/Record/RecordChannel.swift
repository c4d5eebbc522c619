import Pipeline
import Sodium

/// Both directions of the record layer: `encode` seals with the send key, `decode` opens with the
/// receive key. Build it from a handshake result:
/// `RecordChannel(sendKey: result.sendKey, receiveKey: result.receiveKey)`.
public struct RecordChannel {
    public private(set) var sealer: RecordSealer
    public private(set) var opener: RecordOpener

    public init(sendKey: SecureBytes, receiveKey: SecureBytes, rekeyAfter: UInt64 = rekeyAfterRecords,
                maxPlaintext: Int = maxRecordPlaintextAccepted) {
        sealer = RecordSealer(key: sendKey, rekeyAfter: rekeyAfter, maxPlaintext: maxPlaintext)
        opener = RecordOpener(key: receiveKey, rekeyAfter: rekeyAfter, maxPlaintext: maxPlaintext)
    }

    public mutating func encode(_ unit: Record, into output: inout [[UInt8]]) throws(RecordError) {
        try sealer.encode(unit, into: &output)
    }

    public mutating func decode(_ unit: [UInt8], into output: inout [Record]) throws(RecordError) {
        try opener.decode(unit, into: &output)
    }
}
