import Foundation
import Handshake
import Sodium
import TestSupport
import Testing

/// One vector in the cacophony JSON format (fields this suite needs; others are ignored).
struct NoiseVector: Decodable, Sendable {
    struct Message: Decodable, Sendable {
        let payload: String
        let ciphertext: String
    }

    let protocol_name: String
    let init_prologue: String
    let init_static: String?
    let init_ephemeral: String?
    let init_remote_static: String?
    let resp_prologue: String
    let resp_static: String?
    let resp_ephemeral: String?
    let handshake_hash: String?
    let messages: [Message]
}

struct NoiseVectorFile: Decodable {
    let vectors: [NoiseVector]
}

/// A vector with where it came from, for test names and failure messages.
struct LocatedVector: Sendable, CustomTestStringConvertible {
    let file: String
    let index: Int
    let vector: NoiseVector
    var testDescription: String { "\(file) #\(index)" }
}

enum NoiseVectorCorpus {
    static let protocolName = "Noise_IK_25519_ChaChaPoly_BLAKE2b"

    /// Tests/Vectors/noise, found from this file: Tests/HandshakeTests/<file> → ../Vectors/noise.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").appendingPathComponent("noise")

    /// Every IK vector in every *.json file of `folder`, plus anything that went wrong loading them.
    static let loaded: (vectors: [LocatedVector], problems: [String]) = {
        var vectors: [LocatedVector] = []
        var problems: [String] = []
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            return ([], ["cannot list \(folder.path): \(error)"])
        }
        for name in names {
            do {
                let data = try Data(contentsOf: folder.appendingPathComponent(name))
                let file = try JSONDecoder().decode(NoiseVectorFile.self, from: data)
                for (index, vector) in file.vectors.enumerated() where vector.protocol_name == protocolName {
                    vectors.append(LocatedVector(file: name, index: index, vector: vector))
                }
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        return (vectors, problems)
    }()
}

@Suite struct NoiseVectorTests {
    @Test func corpusLoadsAndIsNotEmpty() {
        #expect(NoiseVectorCorpus.loaded.problems.isEmpty, "\(NoiseVectorCorpus.loaded.problems)")
        #expect(!NoiseVectorCorpus.loaded.vectors.isEmpty,
                "no \(NoiseVectorCorpus.protocolName) vectors under \(NoiseVectorCorpus.folder.path)")
    }

    @Test(arguments: NoiseVectorCorpus.loaded.vectors)
    func vectorMatchesByteForByte(_ located: LocatedVector) throws {
        let v = located.vector
        let name = located.testDescription
        let initiatorStatic = SecureBytes(copying: try #require(v.init_static.flatMap { bytes(hex: $0) }, "\(name): init_static"))
        let initiatorEphemeral = SecureBytes(copying: try #require(v.init_ephemeral.flatMap { bytes(hex: $0) }, "\(name): init_ephemeral"))
        let responderStaticPublic = try #require(v.init_remote_static.flatMap { bytes(hex: $0) }, "\(name): init_remote_static")
        let responderStatic = SecureBytes(copying: try #require(v.resp_static.flatMap { bytes(hex: $0) }, "\(name): resp_static"))
        let responderEphemeral = SecureBytes(copying: try #require(v.resp_ephemeral.flatMap { bytes(hex: $0) }, "\(name): resp_ephemeral"))
        let initiatorPrologue = try #require(bytes(hex: v.init_prologue))
        let responderPrologue = try #require(bytes(hex: v.resp_prologue))
        let messages = try v.messages.map { m in
            (payload: try #require(bytes(hex: m.payload), "\(name): payload"),
             ciphertext: try #require(bytes(hex: m.ciphertext), "\(name): ciphertext"))
        }
        try #require(messages.count >= 2, "\(name): IK needs two handshake messages")

        var initiator = try NoiseIKInitiator(localStatic: initiatorStatic, remoteStatic: responderStaticPublic,
                                             prologue: initiatorPrologue, ephemeral: initiatorEphemeral)
        var responder = try NoiseIKResponder(localStatic: responderStatic, prologue: responderPrologue,
                                             ephemeral: responderEphemeral)

        let message1 = try initiator.writeMessage1(payload: messages[0].payload)
        #expect(hex(message1) == hex(messages[0].ciphertext), "\(name): message 1")
        let (remoteStatic, payload1) = try responder.readMessage1(messages[0].ciphertext)
        #expect(payload1 == messages[0].payload, "\(name): message 1 payload")
        #expect(remoteStatic == (try X25519.publicKey(for: initiatorStatic)), "\(name): initiator static")

        let message2 = try responder.writeMessage2(payload: messages[1].payload)
        #expect(hex(message2) == hex(messages[1].ciphertext), "\(name): message 2")
        #expect(try initiator.readMessage2(messages[1].ciphertext) == messages[1].payload, "\(name): message 2 payload")

        let initiatorResult = try initiator.split()
        let responderResult = try responder.split()
        if let expectedHash = v.handshake_hash {
            #expect(hex(initiatorResult.handshakeHash) == expectedHash, "\(name): handshake hash (initiator)")
            #expect(hex(responderResult.handshakeHash) == expectedHash, "\(name): handshake hash (responder)")
        }
        #expect(initiatorResult.initiatorToResponder == responderResult.initiatorToResponder)
        #expect(initiatorResult.responderToInitiator == responderResult.responderToInitiator)
        #expect(initiatorResult.remoteStatic == responderStaticPublic)

        // Transport messages alternate, initiator first (cacophony convention for two-way patterns).
        var initiatorCiphers = initiatorResult.transportCiphers()
        var responderCiphers = responderResult.transportCiphers()
        for (index, message) in messages.enumerated().dropFirst(2) {
            let fromInitiator = index % 2 == 0
            let sealed = fromInitiator
                ? try initiatorCiphers.send.encrypt(associatedData: [], plaintext: message.payload)
                : try responderCiphers.send.encrypt(associatedData: [], plaintext: message.payload)
            #expect(hex(sealed) == hex(message.ciphertext), "\(name): transport message \(index)")
            let opened = fromInitiator
                ? try responderCiphers.receive.decrypt(associatedData: [], ciphertext: message.ciphertext)
                : try initiatorCiphers.receive.decrypt(associatedData: [], ciphertext: message.ciphertext)
            #expect(opened == message.payload, "\(name): transport message \(index) payload")
        }
    }
}
