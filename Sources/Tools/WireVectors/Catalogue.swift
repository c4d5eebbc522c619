import Session

/// The sessions the generator records into Tests/Vectors/blesend: successes, a resume, and the
/// failures a second implementation must reproduce.
public enum Catalogue {
    public static func scenarios() throws(SetupError) -> [Scenario] {
        let sender = FixedInputs.secret("sender static")
        let receiver = FixedInputs.secret("receiver static")
        let senderPublic = try FixedInputs.publicKey(sender)
        let receiverPublic = try FixedInputs.publicKey(receiver)
        let strangerPublic = try FixedInputs.publicKey(FixedInputs.secret("stranger static"))
        let otherReceiverPublic = try FixedInputs.publicKey(FixedInputs.secret("other receiver static"))
        let hello = Array("Hello from blesend. This file fits in one record.\n".utf8)
        let tenKiB = FixedInputs.pattern(10 * 1024)

        /// A one-connection session of `files` between the fixed sender and receiver, each file stored unless said.
        func session(_ comments: [String], files: [(String, [UInt8], stored: Bool)], connections: Int = 1,
                     expect: WireVector.Expectation = .success, configuration: VectorConfiguration = .init(),
                     datagramSizes: (sender: Int, receiver: Int) = (FixedInputs.senderDatagramSize, FixedInputs.receiverDatagramSize))
            -> WireVector {
            WireVector(
                comments: comments, expect: expect, configuration: configuration,
                senderSecret: sender, receiverSecret: receiver, senderPublic: senderPublic, receiverPublic: receiverPublic,
                pinnedReceiverKey: receiverPublic, trustedSenders: [senderPublic],
                connections: (1...connections).map { FixedInputs.connection($0, datagramSizes: datagramSizes) },
                transferIDs: (1...max(files.count, 1)).map(FixedInputs.transferID),
                files: files.map { WireVector.File(name: Array($0.0.utf8), contents: $0.1, stored: $0.stored) },
                events: [])
        }

        var unknownSender = session(["An unknown sender: the receiver trusts another key, answers message 1 with the",
                                     "one-byte refusal, and the sender stops with refusedByPeer."],
                                    files: [("hello.txt", hello, false)],
                                    expect: .failure(code: "refusedByPeer", raisedBy: .sender))
        unknownSender.trustedSenders = [strangerPublic]

        var notTrusted = session(["Not trusted (docs/protocol.md §8.7): the receiver trusts another key and lists",
                                  "notTrusted; the sender asks for it in its hello. Message 2 carries the receiver's hello",
                                  "granting notTrusted and notTrusted in place of the answer: the receiver proves its key",
                                  "and refuses, and the sender stops with notTrustedByPeer. Nothing is stored."],
                                 files: [("hello.txt", hello, false)],
                                 expect: .failure(code: "notTrustedByPeer", raisedBy: .sender),
                                 configuration: VectorConfiguration(extensions: [.notTrusted]))
        notTrusted.trustedSenders = [strangerPublic]

        var wrongKey = session(["A wrong receiver key: the sender pinned another receiver's key, so the receiver",
                                "cannot read message 1 and answers with the refusal; the sender stops with refusedByPeer."],
                               files: [("hello.txt", hello, false)],
                               expect: .failure(code: "refusedByPeer", raisedBy: .sender))
        wrongKey.pinnedReceiverKey = otherReceiverPublic

        var quickIdle = VectorConfiguration()
        quickIdle.session.idleTimeout = .seconds(2)
        var quickRekey = VectorConfiguration()
        quickRekey.session.rekeyAfterRecords = 2
        let extended = VectorConfiguration(extensions: [.compression, .pipelining])
        let text = Array((0..<300).map { "line \($0): text compresses, so it travels as zdata against the history.\n" }.joined().utf8)

        var firstContact = session(
            ["First contact (docs/protocol.md §8.5): the receiver trusts no sender but lists firstContact;",
             "the sender asks for it in its hello. Message 2 carries the receiver's hello granting it and",
             "pending in place of the answer; both sides show the code 528 371 (BLAKE2b-256 of",
             "\"blesend/1 pairing code\" and h after message 2). The receiver's user accepts at once, so",
             "the accept follows in the first record and the file is sent and saved as for a trusted sender."],
            files: [("hello.txt", hello, true)], configuration: VectorConfiguration(extensions: [.firstContact]))
        firstContact.trustedSenders = []

        var busy = session(
            ["A busy receiver (docs/protocol.md §8.6): every slot is taken when the sender comes. The",
             "receiver lists busy; the sender asks for it in its hello. Message 2 carries the receiver's",
             "hello granting it and busy (come back in 5 s, 2 senders waiting before it) in place of the",
             "answer; the sender stops with receiverBusy, to come back later. Nothing is stored."],
            files: [("hello.txt", hello, false)], expect: .failure(code: "receiverBusy", raisedBy: .sender),
            configuration: VectorConfiguration(extensions: [.busy]))
        busy.connections[0].receiverBusy = BusyAnswer(retryAfter: .seconds(5), ahead: 2)

        return [
            Scenario(name: "small-file", vector: session(
                ["One small file in one record: handshake, data, done, confirm, goodbyes."],
                files: [("hello.txt", hello, true)])),
            Scenario(name: "empty-file", vector: session(
                ["An empty file: offer of size 0, accept, done with the hash of nothing, confirm, goodbyes."],
                files: [("empty.txt", [], true)])),
            Scenario(name: "ten-kib-file", vector: session(
                ["A 10 KiB file in three records (4096 + 4096 + 2048 bytes), each over several frames."],
                files: [("pattern-10k.bin", tenKiB, true)])),
            Scenario(name: "extensions-compression-pipelining", vector: session(
                ["Extensions (docs/protocol.md §8) compression and pipelining: a hello in message 1 and in",
                 "message 2; a text file in zdata messages of up to 16384 original bytes, each a zstd frame",
                 "against the history; then three small files whose offers, data and done share records",
                 "(batch) without waiting for the receiver's answers, which come back batched too.",
                 "zstd (1.5.4, level 9) made the frames; another compressor may make others, equally valid:",
                 "such a sender replays the receiver side of this vector, not its own."],
                files: [("text.txt", text, true), ("a.bin", FixedInputs.pattern(300), true), ("b.bin", [], true),
                        ("c.bin", FixedInputs.pattern(1000), true)],
                configuration: extended)),
            Scenario(name: "small-file-mtu-23", vector: session(
                ["The small file at the smallest ATT MTU, 23: datagrams of 20 bytes from the sender and 18",
                 "from the receiver, so both handshake messages and the record span many frames."],
                files: [("hello.txt", hello, true)], datagramSizes: (20, 18))),
            Scenario(name: "forty-kib-file-mtu-517", vector: session(
                ["A 40 KiB file at the largest ATT MTU, 517 (510-byte datagrams both ways, the protocol's",
                 "MaxValueLength): ten records, and the receiver's transfer-level ack after 32768 bytes."],
                files: [("pattern-40k.bin", FixedInputs.pattern(40 * 1024), true)], datagramSizes: (510, 510))),
            Scenario(name: "rekey", vector: session(
                ["A 10 KiB file with rekey-after-records at 2: from the third record on, each direction",
                 "seals with BLAKE2b-256(key = old key, message = \"blesend/1 rekey\"), and again every two records."],
                files: [("pattern-10k.bin", tenKiB, true)], configuration: quickRekey)),
            Scenario(name: "resume-after-cut", vector: session(
                ["A 20 KiB file; the link drops after the sender's 40th datagram (mid-file). The second",
                 "connection runs a new handshake, offers the same transfer id, and resumes where the",
                 "receiver's data stopped."],
                files: [("pattern-20k.bin", FixedInputs.pattern(20 * 1024), true)], connections: 2),
                cuts: [40]),
            Scenario(name: "bad-crc", vector: session(
                ["A corrupted datagram: the attacker flips bit 0 of byte 20 of the sender's datagram 5",
                 "(counted from 0) and leaves the CRC. The receiver drops it, acknowledges the frames after",
                 "it selectively, the sender retransmits it, and the file arrives."],
                files: [("pattern-10k.bin", tenKiB, true)]),
                attack: .flipBit(from: .sender, datagram: 5, byte: 20, bit: 0, fixCRC: false)),
            Scenario(name: "bad-name-dot-dot", vector: session(
                ["A file named '..': the receiver rejects that file (reject, reason 3: bad name) in message 2,",
                 "and the session goes on: the next file is offered in a record and saved."],
                files: [("..", hello, false), ("after.txt", FixedInputs.pattern(300), true)])),
            Scenario(name: "tampered-record", vector: session(
                ["A tampered record: the attacker flips bit 0 of byte 10 of the sender's datagram 1 (the",
                 "frame of the first record, counted from 0) and fixes the CRC. The record fails",
                 "authentication: the receiver stops (record.authenticationFailed) and stores nothing."],
                files: [("hello.txt", hello, false)], expect: .failure(code: "record.authenticationFailed", raisedBy: .receiver)),
                attack: .flipBit(from: .sender, datagram: 1, byte: 10, bit: 0, fixCRC: true)),
            Scenario(name: "truncated-stream", vector: session(
                ["A truncated stream: the attacker lets the first record of a 10 KiB file through and drops",
                 "everything the sender sends after it (sender datagrams 19 on, counted from 0), so neither",
                 "the rest nor done nor goodbye arrives. With the idle timeout at 2 s the receiver ends",
                 "the connection with linkLost and stores nothing."],
                files: [("pattern-10k.bin", tenKiB, false)], expect: .failure(code: "linkLost", raisedBy: .receiver),
                configuration: quickIdle),
                attack: .dropFrom(from: .sender, datagram: 19)),
            Scenario(name: "unknown-sender", vector: unknownSender),
            Scenario(name: "first-contact", vector: firstContact),
            Scenario(name: "busy", vector: busy),
            Scenario(name: "not-trusted", vector: notTrusted),
            Scenario(name: "wrong-receiver-key", vector: wrongKey),
            Scenario(name: "forged-message-2", vector: session(
                ["A forged message 2: the attacker flips bit 0 of byte 40 of the receiver's first datagram",
                 "(message 2, inside its encrypted payload) and fixes the CRC. The sender cannot",
                 "authenticate it and stops with peerNotAuthenticated."],
                files: [("hello.txt", hello, false)], expect: .failure(code: "peerNotAuthenticated", raisedBy: .sender)),
                attack: .flipBit(from: .receiver, datagram: 0, byte: 40, bit: 0, fixCRC: true)),
        ]
    }
}
