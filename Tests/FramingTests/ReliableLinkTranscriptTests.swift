import Framing
import MemoryTransport
import Pipeline
import Testing

/// Pins `ReliableLink`'s behaviour: two links exchange messages over a seeded `SimulatedLink`
/// (`LinkHarness`), and a digest is taken over every datagram either side sends (side, virtual
/// time, bytes), the state after every step (time, both `nextDeadline`s, RTOs, smoothed RTTs,
/// idleness) and both sides' final statistics. A refactor that changes none of the wire format and
/// none of the timing leaves every digest as it is.
///
/// Regenerating the digests: run `swift test --filter ReliableLinkTranscriptTests`; each failing
/// scenario prints the digest it got, which replaces the constant in `scenarios`. Do that only for
/// a deliberate change of the link's behaviour (wire format, timers, ack or retransmission rules),
/// and say so in the commit; for a refactor, a changed digest is a bug. (A change of the
/// harness's stepping changes them too: they were regenerated once, when `LinkHarness` moved onto
/// `VirtualNetwork`, with `ReliableLink` itself unchanged, as the wire vectors showed.)
@Suite struct ReliableLinkTranscriptTests {
    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var datagramSize: Int
        var faults: FaultProfile
        var seed: UInt64
        var configuration = LinkConfiguration()
        var forwardBytes = 90_000
        var backwardBytes = 20_000
        var expected: TranscriptDigest
        var testDescription: String { name }
    }

    /// Digests recorded from the link before it was split into its parts (commit 1e82092).
    static let scenarios: [Scenario] = [
        Scenario(name: "clean 20", datagramSize: 20, faults: .clean, seed: 1,
                 expected: .init(datagrams: 6976, bytes: 138062, fnv: 0x891bcde916ddd5ad)),
        Scenario(name: "hostile 20", datagramSize: 20, faults: .hostile, seed: 11,
                 expected: .init(datagrams: 9059, bytes: 174792, fnv: 0x50b1fa39234aa166)),
        Scenario(name: "hostile 64", datagramSize: 64, faults: .hostile, seed: 12,
                 expected: .init(datagrams: 2495, bytes: 150408, fnv: 0xc319a1be062e6fd3)),
        Scenario(name: "hostile 182", datagramSize: 182, faults: .hostile, seed: 13,
                 expected: .init(datagrams: 810, bytes: 133096, fnv: 0x10ffb2805e9f7049)),
        Scenario(name: "hostile 244", datagramSize: 244, faults: .hostile, seed: 14,
                 expected: .init(datagrams: 643, bytes: 135367, fnv: 0x050c91d321a4d486)),
        Scenario(name: "hostile 510", datagramSize: 510, faults: .hostile, seed: 15,
                 expected: .init(datagrams: 293, bytes: 121717, fnv: 0x6df9accc312e6196)),
        Scenario(name: "heavy loss 64", datagramSize: 64,
                 faults: FaultProfile(loss: 0.15, duplication: 0.05, reordering: 0.2, corruption: 0.05,
                                      latency: .milliseconds(15), jitter: .milliseconds(10)),
                 seed: 99, expected: .init(datagrams: 4138, bytes: 240920, fnv: 0x3ac9f6b0f0b54384)),
        Scenario(name: "window 3 at 8", datagramSize: 8, faults: .hostile, seed: 5,
                 configuration: LinkConfiguration(window: 3, ackEvery: 2),
                 forwardBytes: 6_000, backwardBytes: 2_000,
                 expected: .init(datagrams: 3447, bytes: 23013, fnv: 0x30f876b7f9cab108)),
        // Over 8192 frames: sequence numbers wrap.
        Scenario(name: "wrap at 8", datagramSize: 8, faults: .hostile, seed: 77,
                 forwardBytes: 40_000, backwardBytes: 4_000,
                 expected: .init(datagrams: 14375, bytes: 110481, fnv: 0x293147ec218a252d)),
        // Round trip above the initial RTO: spurious timeouts, backoff, Karn's rule.
        Scenario(name: "slow 182", datagramSize: 182,
                 faults: FaultProfile(loss: 0.02, reordering: 0.05, latency: .milliseconds(600),
                                      jitter: .milliseconds(100), reorderDelay: .milliseconds(300)),
                 seed: 31, expected: .init(datagrams: 1124, bytes: 181745, fnv: 0x3f7e657a72411cbd)),
        Scenario(name: "tuned 244", datagramSize: 244, faults: .hostile, seed: 41,
                 configuration: LinkConfiguration(window: 64, ackEvery: 8, ackDelay: .milliseconds(5),
                                                  initialRTO: .milliseconds(300), minRTO: .milliseconds(50),
                                                  maxRTO: .seconds(2), linkDeadAfter: .seconds(10)),
                 expected: .init(datagrams: 634, bytes: 124328, fnv: 0x56a869867b3f3fc7)),
    ]

    static func messages(bytes: Int, seed: UInt64) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        var out: [[UInt8]] = []
        var remaining = bytes
        while remaining > 0 {
            let n = min(remaining, 1 + Int(random.next() % 3000))
            out.append(random.bytes(n))
            remaining -= n
        }
        return out
    }

    /// Steps the harness until quiet, recording the state after each step.
    static func run(_ h: inout LinkHarness, maxSteps: Int = 2_000_000) -> LinkError? {
        do {
            while h.steps < maxSteps {
                let more = try h.step()
                h.recordState()
                if !more || h.isQuiet { return nil }
            }
        } catch {
            h.recordState()
            return error
        }
        return nil
    }

    /// Adds the outcome (failure, messages delivered, statistics) and checks the digest.
    static func check(_ h: LinkHarness, failure: LinkError?, expected: TranscriptDigest, _ name: String) {
        var transcript = h.transcript ?? LinkTranscript()
        transcript.add(tag: 3)
        transcript.add(String(describing: failure))
        transcript.add(h.receivedByA.count)
        transcript.add(h.receivedByB.count)
        transcript.add(h.a.statistics)
        transcript.add(h.b.statistics)
        let digest = transcript.digest
        print("transcript \(name): \(digest)")
        #expect(digest == expected, "scenario \"\(name)\": got \(digest)")
    }

    @Test(arguments: scenarios)
    func transcriptIsUnchanged(scenario: Scenario) throws {
        var h = LinkHarness(configuration: scenario.configuration, datagramSize: scenario.datagramSize,
                            faults: scenario.faults, seed: scenario.seed)
        h.transcript = LinkTranscript()
        let forward = Self.messages(bytes: scenario.forwardBytes, seed: scenario.seed &* 7 &+ 1)
        let backward = Self.messages(bytes: scenario.backwardBytes, seed: scenario.seed &* 7 &+ 2)
        for m in forward { try h.a.send(message: m) }
        for m in backward { try h.b.send(message: m) }
        let failure = Self.run(&h)
        #expect(failure == nil)
        #expect(h.receivedByB == forward)
        #expect(h.receivedByA == backward)
        Self.check(h, failure: failure, expected: scenario.expected, scenario.name)
    }

    /// The receiver acks in 18-byte notifications while the sender writes 20-byte datagrams
    /// (MTU 23), and lowers its receive window and message limit for a while, as before a handshake.
    @Test func asymmetricDatagramsAndLoweredReceiveWindow() throws {
        var h = LinkHarness(datagramSize: 20, faults: .hostile, seed: 21)
        h.b = ReliableLink(maxDatagramSize: 18)
        h.a.peerMaxDatagramSize = 18
        h.b.peerMaxDatagramSize = 20
        h.b.receiveWindow = 32
        h.b.maxIncomingMessageLength = 4000
        h.transcript = LinkTranscript()
        let forward = Self.messages(bytes: 30_000, seed: 22)
        let backward = Self.messages(bytes: 8_000, seed: 23)
        for m in forward { try h.a.send(message: m) }
        for m in backward { try h.b.send(message: m) }
        var failure: LinkError?
        do {
            while h.receivedByB.count < 3 {
                _ = try h.step()
                h.recordState()
            }
        } catch { failure = error }
        h.b.receiveWindow = 256
        h.b.maxIncomingMessageLength = 65535
        if failure == nil { failure = Self.run(&h) }
        #expect(failure == nil)
        #expect(h.receivedByB == forward)
        #expect(h.receivedByA == backward)
        Self.check(h, failure: failure, expected: .init(datagrams: 3990, bytes: 74966, fnv: 0xf877e9992567ee7c), "asymmetric 20/18, receive window 32")
    }

    /// The datagram size falls from 510 to 20 with frames in flight, then rises to 244.
    @Test func datagramSizeChanges() throws {
        var h = LinkHarness(datagramSize: 510, faults: .hostile, seed: 8)
        h.transcript = LinkTranscript()
        let forward = Self.messages(bytes: 150_000, seed: 9)
        let backward = Self.messages(bytes: 10_000, seed: 10)
        for m in forward { try h.a.send(message: m) }
        for m in backward { try h.b.send(message: m) }
        var failure: LinkError?
        do {
            for round in 0..<400 {
                if round == 3 {
                    h.a.maxDatagramSize = 20
                    h.b.maxDatagramSize = 20
                }
                if round == 200 {
                    h.a.maxDatagramSize = 244
                    h.b.maxDatagramSize = 244
                }
                _ = try h.step()
                h.recordState()
            }
        } catch { failure = error }
        if failure == nil { failure = Self.run(&h) }
        #expect(failure == nil)
        #expect(h.receivedByB == forward)
        #expect(h.receivedByA == backward)
        Self.check(h, failure: failure, expected: .init(datagrams: 911, bytes: 230115, fnv: 0xad169b1cb6ef7c88), "datagram size 510 → 20 → 244")
    }

    /// The peer goes away mid-transfer: timeouts back off until the link is declared dead.
    @Test func peerVanishes() throws {
        var h = LinkHarness(datagramSize: 182, faults: .lossy(percent: 10), seed: 3)
        h.transcript = LinkTranscript()
        for m in Self.messages(bytes: 200_000, seed: 4) { try h.a.send(message: m) }
        var failure: LinkError?
        do {
            for _ in 0..<8 {
                _ = try h.step()
                h.recordState()
            }
        } catch { failure = error }
        h.vanished = .b
        if failure == nil { failure = Self.run(&h) }
        #expect(failure == .linkDead)
        Self.check(h, failure: failure, expected: .init(datagrams: 968, bytes: 165767, fnv: 0x6100b8141e848c5d), "peer vanishes")
    }
}

extension LinkHarness {
    /// Records the state of both links after a step, when a transcript is kept.
    mutating func recordState() {
        guard var transcript else { return }
        transcript.recordStep(self)
        self.transcript = transcript
    }
}

/// What a transcript comes to: datagrams and their bytes (readable in a failure message), and a
/// 64-bit FNV-1a hash over everything recorded.
struct TranscriptDigest: Equatable, Sendable, CustomStringConvertible {
    var datagrams: Int
    var bytes: Int
    var fnv: UInt64

    var description: String {
        let hex = String(fnv, radix: 16)
        return ".init(datagrams: \(datagrams), bytes: \(bytes), fnv: 0x\(String(repeating: "0", count: 16 - hex.count) + hex))"
    }
}

/// An FNV-1a hash over a link run's events, fed by `LinkHarness` (every datagram sent) and by the
/// test (the state after each step, the statistics at the end). Integers go in as 8 bytes,
/// little-endian; each event starts with a tag byte.
struct LinkTranscript {
    private var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    private var datagrams = 0
    private var bytes = 0

    var digest: TranscriptDigest { TranscriptDigest(datagrams: datagrams, bytes: bytes, fnv: hash) }

    mutating func add(tag: UInt8) {
        hash = (hash ^ UInt64(tag)) &* 0x0000_0100_0000_01B3
    }

    mutating func add(_ value: Int64) { add(UInt64(bitPattern: value)) }

    mutating func add(_ value: UInt64) {
        var v = value
        for _ in 0..<8 {
            hash = (hash ^ (v & 0xFF)) &* 0x0000_0100_0000_01B3
            v >>= 8
        }
    }

    mutating func add(_ value: Int) { add(Int64(value)) }

    mutating func add(_ value: Bool) { add(tag: value ? 1 : 0) }

    mutating func add(_ instant: Instant?) { add(instant?.nanoseconds ?? .max) }

    mutating func add(_ duration: Duration?) { add(duration?.nanoseconds ?? -1) }

    mutating func add(_ text: String) {
        add(text.utf8.count)
        for byte in text.utf8 { add(tag: byte) }
    }

    /// One datagram handed to the network.
    mutating func record(_ datagram: [UInt8], from side: SimulatedLink.Side, at now: Instant) {
        datagrams += 1
        bytes += datagram.count
        add(tag: side == .a ? 1 : 2)
        add(now.nanoseconds)
        add(datagram.count)
        for byte in datagram { add(tag: byte) }
    }

    /// The state of both links after a step.
    mutating func recordStep(_ h: LinkHarness) {
        add(tag: 4)
        add(h.now)
        for link in [h.a, h.b] {
            add(link.nextDeadline)
            add(link.retransmissionTimeout)
            add(link.smoothedRoundTripTime)
            add(link.isIdle)
            add(link.bufferedOutboundBytes)
            add(link.bufferedInboundBytes)
        }
    }

    mutating func add(_ s: LinkStatistics) {
        for value in [s.dataFramesSent, s.retransmissions, s.fastRetransmissions, s.timeouts, s.acksSent,
                      s.datagramsSent, s.datagramBytesSent, s.payloadBytesSent, s.datagramsReceived,
                      s.datagramBytesReceived, s.framesReceived, s.acksReceived, s.droppedCorrupt,
                      s.droppedDuplicate, s.droppedOutOfWindow, s.messagesDelivered, s.maxReorderBuffered] {
            add(value)
        }
    }
}
