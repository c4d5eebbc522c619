import Pipeline
import Record
import Sodium
import Transfer

/// Transfer messages over authenticated records, both directions: each message is one record.
///
/// `bye` always travels in a final record, and a final record must carry `bye`, so a stream cut
/// short is told apart from one that ended.
struct SecureMessageChannel {
    private var records: RecordChannel

    init(send: SecureBytes, receive: SecureBytes, rekeyAfter: UInt64) {
        records = RecordChannel(sendKey: send, receiveKey: receive, rekeyAfter: rekeyAfter)
    }

    /// The sealed record that carries `message`.
    mutating func seal(_ message: TransferMessage) throws(SessionError) -> [UInt8] {
        var sealed: [[UInt8]] = []
        do throws(RecordError) {
            try records.encode(Record(plaintext: message.encoded(), isFinal: message == .bye), into: &sealed)
        } catch {
            throw .record(error)
        }
        return sealed[0]
    }

    /// The message a sealed record carries.
    mutating func open(_ bytes: [UInt8]) throws(SessionError) -> TransferMessage {
        var opened: [Record] = []
        do throws(RecordError) {
            try records.decode(bytes, into: &opened)
        } catch {
            throw .record(error)
        }
        let record = opened[0]
        // The record authenticated: whatever is wrong with it, the peer itself sent it.
        let message: TransferMessage
        do {
            message = try TransferMessage(decoding: record.plaintext)
        } catch {
            throw .transfer(.malformedMessage(error))
        }
        guard (message == .bye) == record.isFinal else { throw .transfer(.finalityMismatch) }
        return message
    }
}
