import Handshake
import Record
import Transfer

/// `record`: sealed records into the receiver's `RecordChannel` after a real handshake (fixed keys,
/// rekeying every 3 records so key changes are reached).
///
/// Input: operations. `0` raw record bytes (two-byte length); `1` a genuine record, sealed by the
/// sender's channel (plaintext with a one-byte length; bit 2 of the operation marks it final);
/// `2` a genuine record with one byte changed (position, then a non-zero XOR mask); `3` the last
/// record again (a replay).
///
/// Invariants:
/// - a genuine record opens to exactly its plaintext and final flag, with the counter one higher;
/// - raw bytes open only if they are exactly the record the sender would seal next (nothing is
///   forged), a changed or replayed record never opens;
/// - errors are sticky (every later record throws the same error), nothing opens after `final`;
/// - an opened plaintext is at most the channel's limit.
let recordTarget = FuzzTarget(
    name: "record",
    summary: "records into RecordChannel.decode after a real handshake (rekey every 3)",
    run: runRecord,
    seeds: recordSeeds)

private let rekeyEvery: UInt64 = 3

private func receiverChannel() -> RecordChannel {
    let keys = FixedHandshake.result.responder
    return RecordChannel(sendKey: keys.sendKey, receiveKey: keys.receiveKey, rekeyAfter: rekeyEvery)
}

private func senderChannel() -> RecordChannel {
    let keys = FixedHandshake.result.initiator
    return RecordChannel(sendKey: keys.sendKey, receiveKey: keys.receiveKey, rekeyAfter: rekeyEvery)
}

private func seal(_ channel: inout RecordChannel, _ record: Record) -> [UInt8]? {
    var out: [[UInt8]] = []
    guard (try? channel.encode(record, into: &out)) != nil, out.count == 1 else { return nil }
    return out[0]
}

private func runRecord(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    var receiver = receiverChannel()
    var sender = senderChannel()
    var stickyError: RecordError?
    var finished = false
    var last: [UInt8]?

    /// Feeds `record`; `expected` is the record it must open to (nil: it must not open).
    func feed(_ record: [UInt8], expected: Record?) {
        let countBefore = receiver.opener.recordCount
        var out: [Record] = []
        do {
            try receiver.decode(record, into: &out)
        } catch {
            if let stickyError { require(error == stickyError, "error \(error) after \(stickyError)") }
            if finished { require(error == .recordAfterFinal || error == stickyError, "after final: \(error)") }
            require(receiver.opener.recordCount == countBefore, "a failed record moved the counter")
            require(expected == nil || stickyError != nil || finished, "a genuine record failed: \(error)")
            stickyError = error
            last = record
            return
        }
        require(stickyError == nil && !finished, "a record opened after an error or after final")
        require(out.count == 1, "one record opened into \(out.count)")
        let opened = out[0]
        require(opened.plaintext.count <= receiver.opener.maxPlaintext, "plaintext over the limit")
        require(receiver.opener.recordCount == countBefore + 1, "counter moved by more than one")
        if let expected {
            require(opened == expected, "a genuine record opened to something else")
        } else {
            // Raw bytes that open must be exactly what the sender seals next.
            var probe = sender
            require(seal(&probe, opened) == record, "forged record opened")
            sender = probe
        }
        if opened.isFinal { finished = true }
        last = record
    }

    while !input.isEmpty {
        let operation = input.byte()
        switch operation & 3 {
        case 0:
            feed(input.chunk16(), expected: nil)
        case 1, 2:
            let record = Record(plaintext: input.chunk(), isFinal: operation & 4 != 0)
            guard stickyError == nil, !finished, var sealed = seal(&sender, record) else { continue }
            if operation & 3 == 1 {
                feed(sealed, expected: record)
            } else {
                let position = Int(input.byte()) % sealed.count
                sealed[position] ^= max(input.byte(), 1)
                feed(sealed, expected: nil)
                require(stickyError != nil, "a changed record opened")
            }
        default:
            guard let replay = last else { continue }
            feed(replay, expected: nil)
            require(stickyError != nil, "a replayed record opened")
        }
    }
}

private func recordSeeds() -> [FuzzSeed] {
    let id = TransferID(halves: (7, 9))
    let conversation: [TransferMessage] = [
        .data(Array("first chunk of the file".utf8)),
        .data((0..<200).map { UInt8(truncatingIfNeeded: $0) }),
        .data([0xFF]),
        .done(id: id, hash: [UInt8](repeating: 0xAB, count: 32)),
        .offer(.init(id: TransferID(halves: (8, 10)), size: 3, name: "b.txt")),
        .data([1, 2, 3]),
        .bye,
    ]
    var genuine = FuzzInputBuilder()
    for message in conversation {
        genuine.byte(message == .bye ? 5 : 1)
        genuine.chunk(message.encoded())
    }

    // The same records as raw bytes (as they arrive from the link).
    var sender = senderChannel()
    var raw = FuzzInputBuilder()
    for message in conversation {
        guard let sealed = seal(&sender, Record(plaintext: message.encoded(), isFinal: message == .bye)) else { break }
        raw.byte(0)
        raw.chunk16(sealed)
    }

    var tampered = FuzzInputBuilder()
    tampered.byte(1)
    tampered.chunk(TransferMessage.data([1, 2, 3, 4]).encoded())
    tampered.byte(2)
    tampered.chunk(TransferMessage.data([5, 6, 7, 8]).encoded())
    tampered.byte(3)
    tampered.byte(0x10)

    var replay = FuzzInputBuilder()
    replay.byte(1)
    replay.chunk(TransferMessage.data([9]).encoded())
    replay.byte(3)

    return [
        FuzzSeed("genuine-conversation", genuine.bytes),
        FuzzSeed("raw-conversation", raw.bytes),
        FuzzSeed("tampered", tampered.bytes),
        FuzzSeed("replay", replay.bytes),
    ]
}
