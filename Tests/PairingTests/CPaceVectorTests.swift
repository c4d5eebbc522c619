import Foundation
@testable import Pairing
import Sodium
import TestSupport
import Testing

/// Tests/Vectors/cpace/cpace-ristr255-sha512.json: the draft's vectors (see the README there).
struct CPaceVectorFile: Decodable {
    struct LengthPrefixed: Decodable { let input: String; let output: String }
    struct Concatenation: Decodable { let inputs: [String]; let output: String }
    struct Transcript: Decodable { let Ya: String; let ADa: String; let Yb: String; let ADb: String; let output: String }
    struct Generator: Decodable {
        let PRS: String, CI: String, sid: String
        let zpad_length: Int
        let generator_string: String, hash: String, g: String
    }
    struct Exchange: Decodable {
        let ya: String, ADa: String, Ya: String
        let yb: String, ADb: String, Yb: String
        let K: String, transcript_ir: String, isk_input_ir: String, ISK_IR: String
    }
    struct ValidMultiplication: Decodable { let s: String; let X: String; let scalar_mult_vfy: String }
    struct InvalidMultiplication: Decodable { let s: String; let points: [String] }

    let source: String
    let prepend_len: [LengthPrefixed]
    let lv_cat: Concatenation
    let transcript_ir: [Transcript]
    let generator: Generator
    let exchange: Exchange
    let scalar_mult_valid: ValidMultiplication
    let scalar_mult_vfy_invalid: InvalidMultiplication

    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/cpace/cpace-ristr255-sha512.json")

    static func load() throws -> CPaceVectorFile {
        try JSONDecoder().decode(CPaceVectorFile.self, from: Data(contentsOf: url))
    }
}

/// Hex from a vector file, failing the test on malformed hex.
func vectorBytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(bytes(hex: text), "bad hex in a vector: \(text)", sourceLocation: sourceLocation)
}

private func secret(_ text: String) throws -> SecureBytes { SecureBytes(copying: try vectorBytes(text)) }
private func open(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

@Suite struct CPaceVectorTests {
    @Test func vectorsNameTheirSource() throws {
        #expect(try CPaceVectorFile.load().source.hasPrefix("draft-irtf-cfrg-cpace-21"))
    }

    @Test func lengthValueEncoding() throws {
        let file = try CPaceVectorFile.load()
        for vector in file.prepend_len {
            #expect(hex(LengthValue.prependLength(try vectorBytes(vector.input))) == vector.output)
        }
        #expect(hex(LengthValue.concatenate(try file.lv_cat.inputs.map { try vectorBytes($0) })) == file.lv_cat.output)
        // The draft's prepend_len vectors for 127 and 128 bytes: one length byte, then two.
        #expect(LengthValue.prependLength([UInt8](0..<127)).prefix(1) == [0x7F])
        #expect(LengthValue.prependLength([UInt8](0..<128)).prefix(2) == [0x80, 0x01])
        #expect(LengthValue.leb128(300) == [0xAC, 0x02])
    }

    @Test func initiatorResponderTranscript() throws {
        for vector in try CPaceVectorFile.load().transcript_ir {
            let transcript = CPace.initiatorResponderTranscript(
                initiatorShare: try vectorBytes(vector.Ya), initiatorData: try vectorBytes(vector.ADa),
                responderShare: try vectorBytes(vector.Yb), responderData: try vectorBytes(vector.ADb))
            #expect(hex(transcript) == vector.output)
        }
    }

    @Test func generator() throws {
        let vector = try CPaceVectorFile.load().generator
        let prs = try vectorBytes(vector.PRS), ci = try vectorBytes(vector.CI), sid = try vectorBytes(vector.sid)
        let string = CPace.generatorString(prs: prs, channelIdentifier: ci, sid: sid)
        #expect(hex(string) == vector.generator_string)
        #expect(string.count == 1 + CPace.domainSeparator.count + 1 + prs.count + 1 + vector.zpad_length + 1 + ci.count + 1 + sid.count)
        #expect(hex(SHA512.hash(string)) == vector.hash)
        #expect(hex(open(try CPace.calculateGenerator(prs: prs, channelIdentifier: ci, sid: sid))) == vector.g)
    }

    @Test func sharesSharedPointAndISK() throws {
        let file = try CPaceVectorFile.load()
        let vector = file.exchange
        let generator = try CPace.calculateGenerator(
            prs: try vectorBytes(file.generator.PRS), channelIdentifier: try vectorBytes(file.generator.CI),
            sid: try vectorBytes(file.generator.sid))
        let ya = try secret(vector.ya), yb = try secret(vector.yb)
        let shareA = try CPace.share(scalar: ya, generator: generator)
        let shareB = try CPace.share(scalar: yb, generator: generator)
        #expect(hex(shareA) == vector.Ya)
        #expect(hex(shareB) == vector.Yb)
        let pointA = try CPace.sharedPoint(scalar: ya, peerShare: shareB)
        let pointB = try CPace.sharedPoint(scalar: yb, peerShare: shareA)
        #expect(hex(open(pointA)) == vector.K)
        #expect(hex(open(pointB)) == vector.K)

        let adA = try vectorBytes(vector.ADa), adB = try vectorBytes(vector.ADb)
        let transcript = CPace.initiatorResponderTranscript(initiatorShare: shareA, initiatorData: adA, responderShare: shareB, responderData: adB)
        #expect(hex(transcript) == vector.transcript_ir)
        let sid = try vectorBytes(file.generator.sid)
        let iskInput = LengthValue.concatenate([CPace.iskDomainSeparator, sid, open(pointA)]) + transcript
        #expect(hex(iskInput) == vector.isk_input_ir)
        for point in [pointA, pointB] {
            let isk = CPace.intermediateSessionKey(
                sid: sid, sharedPoint: point, initiatorShare: shareA, initiatorData: adA, responderShare: shareB, responderData: adB)
            #expect(hex(open(isk)) == vector.ISK_IR)
        }
    }

    @Test func scalarMultiplicationWithValidInput() throws {
        let vector = try CPaceVectorFile.load().scalar_mult_valid
        let product = try CPace.sharedPoint(scalar: try secret(vector.s), peerShare: try vectorBytes(vector.X))
        #expect(hex(open(product)) == vector.scalar_mult_vfy)
    }

    /// The draft: scalar_mult_vfy returns G.I for these, and a party that receives one MUST abort.
    @Test func invalidSharesAbort() throws {
        let vector = try CPaceVectorFile.load().scalar_mult_vfy_invalid
        for point in vector.points {
            #expect(throws: SodiumError.invalidGroupElement) {
                try CPace.sharedPoint(scalar: try secret(vector.s), peerShare: try vectorBytes(point))
            }
        }
    }
}
