import Pipeline
import Record
import Sodium
import Transfer

/// Transfer messages over authenticated records: the top two layers of the pipeline, stacked.
///
/// `bye` always travels in a final record, and a final record must carry `bye`, so a stream cut
/// short is told apart from one that ended.
struct FinalityCodec: Codec {
    typealias Upper = TransferMessage
    typealias Lower = Record

    mutating func encode(_ unit: TransferMessage, into output: inout [Record]) throws {
        output.append(Record(plaintext: unit.encoded(), isFinal: unit == .bye))
    }

    mutating func decode(_ unit: Record, into output: inout [TransferMessage]) throws {
        // The record authenticated: whatever is wrong with it, the peer itself sent it.
        let message: TransferMessage
        do {
            message = try TransferMessage(decoding: unit.plaintext)
        } catch {
            throw SessionError.transfer(.malformedMessage(error))
        }
        guard (message == .bye) == unit.isFinal else {
            throw SessionError.transfer(.finalityMismatch)
        }
        output.append(message)
    }
}

/// TransferMessage ⇅ record plaintext ⇅ sealed record bytes. The compiler checks that the layers fit.
typealias SecureTransferCodec = Stacked<FinalityCodec, RecordChannel>

func makeSecureTransferCodec(send: SecureBytes, receive: SecureBytes, rekeyAfter: UInt64) -> SecureTransferCodec {
    FinalityCodec().stacked(on: RecordChannel(sendKey: send, receiveKey: receive, rekeyAfter: rekeyAfter))
}

extension SecureTransferCodec {
    mutating func seal(_ message: TransferMessage) throws(SessionError) -> [UInt8] {
        var out: [[UInt8]] = []
        do {
            try encode(message, into: &out)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .record(error as? RecordError ?? .wrongDirection)
        }
        // One message is one record (the codecs above produce exactly one).
        guard let sealed = out.first else { throw .record(.wrongDirection) }
        return sealed
    }

    mutating func open(_ bytes: [UInt8]) throws(SessionError) -> TransferMessage {
        var out: [TransferMessage] = []
        do {
            try decode(bytes, into: &out)
        } catch let error as SessionError {
            throw error
        } catch {
            throw .record(error as? RecordError ?? .authenticationFailed)
        }
        guard let message = out.first else { throw .record(.authenticationFailed) }
        return message
    }
}
