import Foundation
import Framing
import Handshake
import Pipeline
import Sodium
import TestSupport
import Testing
import WireVectors

/// docs/protocol-examples.md works through small-file.vec (and one ack of bad-crc.vec) by hand.
/// Here every value it shows is computed again from its stated inputs, with the layers' own
/// primitives (Noise IK, XChaCha20-Poly1305, CRC-16) rather than the sessions, checked against the
/// vector's datagrams, and looked for in the document, so neither can drift.
@Suite struct ProtocolExamplesTests {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs").appendingPathComponent("protocol-examples.md")

    /// The datagram lines of a vector, in order.
    static func datagrams(_ vector: WireVector) -> [(route: WireVector.Route, bytes: [UInt8])] {
        vector.events.compactMap { event in
            if case .datagram(let route, let bytes) = event.kind { return (route, bytes) }
            return nil
        }
    }

    /// A frame's payload: what lies between its header (and length, for a start frame) and its CRC.
    static func body(of frame: [UInt8], start: Bool) -> [UInt8] {
        Array(frame[(start ? 4 : 2)..<(frame.count - 2)])
    }

    /// Every value the document shows, by name, computed from small-file.vec's header.
    static func examples() throws -> [(String, [UInt8])] {
        let file = try #require(VectorCorpus.files.files.first { $0.name == "small-file.vec" })
        let vector = try WireVector(parsing: file.text)
        let connection = try #require(vector.connections.first)
        let offered = try #require(vector.files.first)
        let transferID = try #require(vector.transferIDs.first)
        let lines = datagrams(vector)

        // Handshake message 1: e, es, s, ss with the payload u64 timestamp ‖ offer.
        var payload1: [UInt8] = []
        payload1.appendBigEndian(connection.wallClock)
        payload1 += [0x01] + transferID
        payload1.appendBigEndian(UInt64(offered.contents.count))
        payload1 += [UInt8(offered.name.count)] + offered.name
        var initiator = try NoiseIKInitiator(
            localStatic: SecureBytes(copying: vector.senderSecret), remoteStatic: vector.pinnedReceiverKey,
            prologue: Array("blesend/1".utf8), ephemeral: SecureBytes(copying: connection.senderEphemeral))
        var responder = try NoiseIKResponder(
            localStatic: SecureBytes(copying: vector.receiverSecret), prologue: Array("blesend/1".utf8),
            ephemeral: SecureBytes(copying: connection.receiverEphemeral))
        let message1 = try initiator.writeMessage1(payload: payload1)
        _ = try responder.readMessage1(message1)
        // Message 2: e, ee, se with the payload accept(id, offset 0).
        var payload2: [UInt8] = [0x02] + transferID
        payload2.appendBigEndian(UInt64(0))
        let message2 = try responder.writeMessage2(payload: payload2)
        _ = try initiator.readMessage2(message2)
        let keys = try initiator.split()
        let senderKey = keys.initiatorToResponder.withUnsafeBytes { Array($0) }
        let receiverKey = keys.responderToInitiator.withUnsafeBytes { Array($0) }

        // The first record, sender to receiver: counter 0, header 0x00 (not final), data message.
        let nonce = [UInt8](repeating: 0, count: 24)
        let plaintext = [0x03] + offered.contents
        let sealed = try AEAD.xChaCha20Poly1305IETF.seal(key: keys.initiatorToResponder, nonce: nonce,
                                                         plaintext: plaintext, associatedData: [0x00])
        let record = [0x00] + sealed

        // Frames: message 1, message 2, the record, and the acks.
        func dataFrame(sequence: UInt8, message: [UInt8]) -> [UInt8] {
            var frame: [UInt8] = [0x60, sequence]
            frame.appendBigEndian(UInt16(message.count))
            frame += message
            frame.appendBigEndian(CRC16.checksum(frame))
            return frame
        }
        func ackFrame(cumulative: UInt8, bitmap: [UInt8]) -> [UInt8] {
            var frame: [UInt8] = [0x80, cumulative] + bitmap
            frame.appendBigEndian(CRC16.checksum(frame))
            return frame
        }
        let frame1 = dataFrame(sequence: 0, message: message1)
        let frame2 = dataFrame(sequence: 0, message: message2)
        let recordFrame = dataFrame(sequence: 1, message: record)
        let ack = ackFrame(cumulative: 3, bitmap: [])
        let selectiveAck = ackFrame(cumulative: 5, bitmap: [0xFF, 0xFF, 0xFF, 0xFF, 0x7F])

        // The same bytes are in the vectors.
        #expect(lines[0].bytes == frame1 && lines[0].route == .senderToReceiver, "message 1 frame")
        #expect(lines[1].bytes == frame2 && lines[1].route == .receiverToSender, "message 2 frame")
        #expect(lines[2].bytes == recordFrame, "first record frame")
        #expect(lines.contains { $0.route == .senderToReceiver && $0.bytes == ack }, "ack frame")
        let badCRC = try #require(VectorCorpus.files.files.first { $0.name == "bad-crc.vec" })
        #expect(datagrams(try WireVector(parsing: badCRC.text)).contains { $0.route == .receiverToSender && $0.bytes == selectiveAck },
                "selective ack frame")
        #expect(keys.handshakeHash.count == 64)

        return [
            ("sender static secret", vector.senderSecret), ("sender static public", vector.senderPublic),
            ("receiver static secret", vector.receiverSecret), ("receiver static public", vector.receiverPublic),
            ("sender ephemeral secret", connection.senderEphemeral),
            ("sender ephemeral public", try X25519.publicKey(for: SecureBytes(copying: connection.senderEphemeral))),
            ("receiver ephemeral secret", connection.receiverEphemeral),
            ("receiver ephemeral public", try X25519.publicKey(for: SecureBytes(copying: connection.receiverEphemeral))),
            ("message 1 payload", payload1), ("message 1", message1), ("message 1 frame", frame1),
            ("message 2 payload", payload2), ("message 2", message2), ("message 2 frame", frame2),
            ("handshake hash", keys.handshakeHash), ("sender-to-receiver key", senderKey), ("receiver-to-sender key", receiverKey),
            ("record plaintext", plaintext), ("record ciphertext and tag", sealed), ("record", record),
            ("record frame", recordFrame), ("ack frame", ack), ("selective ack frame", selectiveAck),
        ]
    }

    @Test func everyExampleIsInTheDocument() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        // Long values are wrapped over several lines: compare without white space.
        let compact = String(text.filter { !$0.isWhitespace }).lowercased()
        for (name, value) in try Self.examples() {
            #expect(compact.contains(hex(value)), "\(name) is not in docs/protocol-examples.md:\n\(hex(value))")
        }
    }
}
