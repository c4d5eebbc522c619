@testable import Pairing
import Keys
import Sodium

/// BLAKE2b of `"blesend pairing vectors: " + label`, `count` bytes (at most 64): test-only
/// secrets anyone can re-derive.
func labelledBytes(_ label: String, count: Int = 32) -> [UInt8] {
    BLAKE2b.hash(Array("blesend pairing vectors: \(label)".utf8), outputLength: max(count, 16)).prefix(count).map { $0 }
}

/// An identity whose secret key is `labelledBytes(label)`.
func labelledIdentity(_ label: String) -> Identity {
    // A 32-byte secret is always a valid X25519 key, and `Identity.init` throws only for others.
    guard let identity = try? Identity(secretKey: SecureBytes(copying: labelledBytes(label))) else {
        preconditionFailure("a 32-byte secret key was refused")
    }
    return identity
}

/// A random source that hands out the given byte strings in order, each for a request of its
/// exact length; anything else stops the test (a state machine drew other randomness than the
/// vector says).
final class ScriptedRandom {
    private var pending: [[UInt8]]

    init(_ draws: [[UInt8]]) { pending = draws }

    var isExhausted: Bool { pending.isEmpty }

    func bytes(_ count: Int) -> [UInt8] {
        precondition(!pending.isEmpty, "no scripted random bytes left for a draw of \(count)")
        let next = pending.removeFirst()
        precondition(next.count == count, "scripted draw of \(next.count) bytes, asked for \(count)")
        return next
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small, fast, seeded generator for deterministic runs.
/// Not for secrets.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    mutating func passcode() -> PairingPasscode {
        // `value` below the bound always makes a code.
        PairingPasscode(value: UInt32.random(in: 0..<PairingPasscode.upperBound, using: &self)) ?? PairingPasscode.random()
    }
}

/// A reference type around `SeededGenerator`, so a state machine's `random` closure can draw from
/// the one sequence a test owns.
final class SeededSource {
    var generator: SeededGenerator
    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }
    func bytes(_ count: Int) -> [UInt8] { generator.bytes(count) }
}

/// Builds pairing messages the state machines would never send, from the protocol's own parts
/// (white-box, through `@testable`): what a peer that knows, or guesses, the code can seal, with
/// any plaintext. For malformed-content tests and for the relay of the man-in-the-middle test.
struct PairingForger {
    let code: PairingPasscode

    /// The keys and associated data of a run, from one side's scalar and both shares.
    struct Run {
        let cipher: PairingCipher
        let associatedData: [UInt8]
    }

    static func run(message1: [UInt8], responderShare: [UInt8], scalar: SecureBytes, peerShare: [UInt8]) throws -> Run {
        let sid = Array(message1[1..<1 + PairingLayout.sidLength])
        let initiatorShare = Array(message1[(1 + PairingLayout.sidLength)...])
        let point = try CPace.sharedPoint(scalar: scalar, peerShare: peerShare)
        let isk = CPace.intermediateSessionKey(
            sid: sid, sharedPoint: point, initiatorShare: initiatorShare, initiatorData: [],
            responderShare: responderShare, responderData: [])
        return Run(cipher: PairingCipher(intermediateSessionKey: isk), associatedData: message1 + responderShare)
    }

    /// A P2 answering `message1` under `code`, sealing `introduction` as it is (any bytes).
    func message2(answering message1: [UInt8], introduction: [UInt8], seed: [UInt8] = labelledBytes("forger scalar", count: 64)) throws -> [UInt8] {
        var wide = seed
        let scalar = try CPace.scalar(fromRandom: &wide)
        let sid = Array(message1[1..<1 + PairingLayout.sidLength])
        let generator = try CPace.calculateGenerator(prs: code.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid)
        let share = try CPace.share(scalar: scalar, generator: generator)
        let initiatorShare = Array(message1[(1 + PairingLayout.sidLength)...])
        let run = try Self.run(message1: message1, responderShare: share, scalar: scalar, peerShare: initiatorShare)
        return share + (try PairingCipher.seal(key: run.cipher.receiverKey, counter: 0, associatedData: run.associatedData, plaintext: introduction))
    }

    /// An initiator's half-run under `code`: P1, and then, given the receiver's P2, the P3 that
    /// seals `introduction` under the keys this side derives, whether or not P2 authenticated.
    struct Initiator {
        let message1: [UInt8]
        let scalar: SecureBytes

        func message3(answering message2: [UInt8], introduction: [UInt8]) throws -> [UInt8] {
            let responderShare = Array(message2.prefix(PairingLayout.shareLength))
            let run = try PairingForger.run(message1: message1, responderShare: responderShare, scalar: scalar, peerShare: responderShare)
            return try PairingCipher.seal(key: run.cipher.senderKey, counter: 0, associatedData: run.associatedData, plaintext: introduction)
        }
    }

    func initiator(sid: [UInt8], seed: [UInt8]) throws -> Initiator {
        var wide = seed
        let scalar = try CPace.scalar(fromRandom: &wide)
        let generator = try CPace.calculateGenerator(prs: code.prs, channelIdentifier: PairingLayout.channelIdentifier, sid: sid)
        let share = try CPace.share(scalar: scalar, generator: generator)
        return Initiator(message1: [PairingLayout.modeByte] + sid + share, scalar: scalar)
    }
}
