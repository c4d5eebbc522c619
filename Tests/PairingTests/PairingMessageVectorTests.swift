import Foundation
import Handshake
import Keys
@testable import Pairing
import Sodium
import TestSupport
import Testing

/// Tests/Vectors/blesend/pairing-messages.json: P1..P4 with every input fixed (static keys, names,
/// code, sid, scalar seeds), the values in between (generator, shares, K, ISK, k_S, k_R) and each
/// message in hex. Written by `PairingMessageVectorTests` itself when the environment has
/// `BLESEND_WRITE_PAIRING_VECTORS=1` (`BLESEND_WRITE_PAIRING_VECTORS=1 swift test --filter
/// PairingMessageVectorTests`); otherwise the test checks the file against the code both ways.
struct PairingVectorFile: Codable, Equatable {
    struct Vector: Codable, Equatable {
        var name: String
        var comment: String
        /// `success`, or the `PairingError.code` that ends the run.
        var expect: String
        /// `sender` or `receiver`: who raises `expect` (only for an error).
        var raised_by: String?
        var sender_code: String
        var receiver_code: String
        var channel_identifier: String
        var sender_secret: String
        var sender_public: String
        var sender_name: String
        var receiver_secret: String
        var receiver_public: String
        var receiver_name: String
        /// The sender's random draws, in order: sid (16 bytes), then its scalar's 64 bytes.
        var sid: String
        var sender_scalar_seed: String
        /// The receiver's one draw: its scalar's 64 bytes.
        var receiver_scalar_seed: String
        // Values in between (success only): for a second implementation to find where it differs.
        var sender_scalar: String?
        var receiver_scalar: String?
        var generator_string: String?
        var generator: String?
        var Ya: String?
        var Yb: String?
        var K: String?
        var ISK: String?
        var k_S: String?
        var k_R: String?
        var associated_data: String?
        // The messages, as far as the run goes.
        var P1: String
        var P2: String
        var P3: String?
        var P4: String?
    }

    var format: String
    var source: String
    var vectors: [Vector]

    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/blesend/pairing-messages.json")
}

private func open(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

/// Records the vectors from the real state machines, with inputs derived from labels.
enum PairingVectorRecorder {
    static func record() throws -> PairingVectorFile {
        PairingVectorFile(
            format: "blesend-pairing-vector 1",
            source: "Tests/PairingTests/PairingMessageVectorTests.swift (BLESEND_WRITE_PAIRING_VECTORS=1); docs/protocol.md §9",
            vectors: [
                try vector(name: "success", comment: "Both sides hold the same code: P1..P4, each side pins the other.",
                           senderCode: 31_415_926, receiverCode: 31_415_926),
                try vector(name: "wrong-code", comment: "The sender's user typed another code: P2 does not open on the sender (wrongCode), which pins nothing and sends nothing more.",
                           senderCode: 31_415_927, receiverCode: 31_415_926),
            ])
    }

    static func vector(name: String, comment: String, senderCode: UInt32, receiverCode: UInt32) throws -> PairingVectorFile.Vector {
        let senderSecret = labelledBytes("\(name) sender static"), receiverSecret = labelledBytes("\(name) receiver static")
        let sender = try Identity(secretKey: SecureBytes(copying: senderSecret))
        let receiver = try Identity(secretKey: SecureBytes(copying: receiverSecret))
        let sid = labelledBytes("\(name) sid", count: 16)
        let senderSeed = labelledBytes("\(name) sender scalar", count: 64)
        let receiverSeed = labelledBytes("\(name) receiver scalar", count: 64)
        let typed = try #require(PairingPasscode(value: senderCode)), shown = try #require(PairingPasscode(value: receiverCode))

        var initiator = try PairingInitiator(identity: sender, name: "laptop", code: typed, random: ScriptedRandom([sid, senderSeed]).bytes)
        var responder = try PairingResponder(identity: receiver, name: "desk-pi", code: shown, random: ScriptedRandom([receiverSeed]).bytes)
        var vector = PairingVectorFile.Vector(
            name: name, comment: comment, expect: "success",
            sender_code: typed.display, receiver_code: shown.display,
            channel_identifier: hex(PairingLayout.channelIdentifier),
            sender_secret: hex(senderSecret), sender_public: hex(sender.publicKey.bytes), sender_name: "laptop",
            receiver_secret: hex(receiverSecret), receiver_public: hex(receiver.publicKey.bytes), receiver_name: "desk-pi",
            sid: hex(sid), sender_scalar_seed: hex(senderSeed), receiver_scalar_seed: hex(receiverSeed),
            P1: "", P2: "")
        let message1 = initiator.message1()
        let message2 = try responder.readMessage1(message1)
        vector.P1 = hex(message1)
        vector.P2 = hex(message2)
        guard typed == shown else {
            #expect(throws: PairingError.wrongCode) { try initiator.readMessage2(message2) }
            vector.expect = PairingError.wrongCode.code
            vector.raised_by = "sender"
            return vector
        }
        let message3 = try initiator.readMessage2(message2).message3
        _ = try responder.readMessage3(message3)
        let message4 = try responder.message4()
        try initiator.readMessage4(message4)
        vector.P3 = hex(message3)
        vector.P4 = hex(message4)

        // The values in between, from the CPace functions themselves.
        var wide = senderSeed
        let ya = try CPace.scalar(fromRandom: &wide)
        wide = receiverSeed
        let yb = try CPace.scalar(fromRandom: &wide)
        let generator = try CPace.calculateGenerator(prs: shown.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid)
        let shareA = try CPace.share(scalar: ya, generator: generator), shareB = try CPace.share(scalar: yb, generator: generator)
        let point = try CPace.sharedPoint(scalar: ya, peerShare: shareB)
        let isk = CPace.intermediateSessionKey(sid: sid, sharedPoint: point, initiatorShare: shareA, initiatorData: [], responderShare: shareB, responderData: [])
        let cipher = PairingCipher(intermediateSessionKey: isk)
        vector.sender_scalar = hex(open(ya))
        vector.receiver_scalar = hex(open(yb))
        vector.generator_string = hex(CPace.generatorString(prs: shown.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid))
        vector.generator = hex(open(generator))
        vector.Ya = hex(shareA)
        vector.Yb = hex(shareB)
        vector.K = hex(open(point))
        vector.ISK = hex(open(isk))
        vector.k_S = hex(open(cipher.senderKey))
        vector.k_R = hex(open(cipher.receiverKey))
        vector.associated_data = hex(message1 + shareB)
        return vector
    }
}

@Suite struct PairingMessageVectorTests {
    static var writing: Bool { ProcessInfo.processInfo.environment["BLESEND_WRITE_PAIRING_VECTORS"] == "1" }

    /// Writes the file when asked; otherwise the file must be exactly what the code records now.
    @Test func fileMatchesTheCode() throws {
        let recorded = try PairingVectorRecorder.record()
        if Self.writing {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try (encoder.encode(recorded) + Data("\n".utf8)).write(to: PairingVectorFile.url)
        }
        let stored = try JSONDecoder().decode(PairingVectorFile.self, from: Data(contentsOf: PairingVectorFile.url))
        #expect(stored == recorded)
    }

    /// One side at a time, from the file alone: each side, fed the other's messages, produces
    /// exactly the file's.
    @Test func eachSideReplaysTheFile() throws {
        let file = try JSONDecoder().decode(PairingVectorFile.self, from: Data(contentsOf: PairingVectorFile.url))
        #expect(file.vectors.count == 2)
        for vector in file.vectors {
            let sender = try Identity(secretKey: SecureBytes(copying: try vectorBytes(vector.sender_secret)))
            let receiver = try Identity(secretKey: SecureBytes(copying: try vectorBytes(vector.receiver_secret)))
            #expect(hex(sender.publicKey.bytes) == vector.sender_public)
            #expect(hex(receiver.publicKey.bytes) == vector.receiver_public)
            let typed = try #require(PairingPasscode(typed: vector.sender_code))
            let shown = try #require(PairingPasscode(typed: vector.receiver_code))
            #expect(vector.channel_identifier == hex(PairingLayout.channelIdentifier))
            let senderDraws = ScriptedRandom([try vectorBytes(vector.sid), try vectorBytes(vector.sender_scalar_seed)])
            let receiverDraws = ScriptedRandom([try vectorBytes(vector.receiver_scalar_seed)])

            // The sender.
            var initiator = try PairingInitiator(identity: sender, name: vector.sender_name, code: typed, random: senderDraws.bytes)
            #expect(hex(initiator.message1()) == vector.P1, "\(vector.name)")
            if vector.expect == "success" {
                let (peer, message3) = try initiator.readMessage2(try vectorBytes(vector.P2))
                #expect(peer == PairingPeer(publicKey: receiver.publicKey, name: vector.receiver_name))
                #expect(hex(message3) == vector.P3)
                try initiator.readMessage4(try vectorBytes(try #require(vector.P4)))
                #expect(initiator.isComplete)
            } else {
                #expect(vector.raised_by == "sender")
                #expect(throws: PairingError.self) {
                    do { _ = try initiator.readMessage2(try vectorBytes(vector.P2)) } catch let error as PairingError {
                        #expect(error.code == vector.expect)
                        throw error
                    }
                }
            }
            #expect(senderDraws.isExhausted)

            // The receiver.
            var responder = try PairingResponder(identity: receiver, name: vector.receiver_name, code: shown, random: receiverDraws.bytes)
            #expect(hex(try responder.readMessage1(try vectorBytes(vector.P1))) == vector.P2, "\(vector.name)")
            if vector.expect == "success" {
                let peer = try responder.readMessage3(try vectorBytes(try #require(vector.P3)))
                #expect(peer == PairingPeer(publicKey: sender.publicKey, name: vector.sender_name))
                #expect(hex(try responder.message4()) == vector.P4)
            }
            #expect(receiverDraws.isExhausted)
        }
    }

    /// The lengths the vector shows are the layout's.
    @Test func messagesFitThePreAuthenticationLimit() throws {
        #expect(PairingLayout.p1Length == 49)
        #expect(PairingLayout.maxMessageLength == 112)
        #expect(PairingLayout.maxMessageLength <= maxHandshakeMessageLength)
    }
}
