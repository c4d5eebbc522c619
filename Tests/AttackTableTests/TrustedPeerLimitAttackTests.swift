import Foundation
import Framing
import MemoryTransport
import Pipeline
import Session
import Simulation
import Testing
import Transfer
@testable import BlesendCLI

/// docs/threat-model.md, attack table, "Resources" rows from the review of issue 20: what one
/// record, or one datagram now and then, can cost a receiver.

/// Batches nested as deep as one record holds (65,518 bytes of plaintext: 21,838 levels) around
/// one `data` byte, built outermost first.
private func deeplyNestedBatches() -> [UInt8] {
    let depth = (65_518 - 2) / 3
    var bytes: [UInt8] = []
    for level in 0..<depth {
        let length = 3 * (depth - 1 - level) + 2
        bytes += [TransferMessage.Kind.batch.rawValue, UInt8(length >> 8), UInt8(length & 0xFF)]
    }
    return bytes + [TransferMessage.Kind.data.rawValue, 0x2A]
}

@Test("attack: a trusted sender's record of batches nested 21,838 deep")
func deeplyNestedBatchFromATrustedSender() throws {
    let target = try Target()
    var receiver = target.receiver()
    let offer = TransferMessage.offer(.init(id: transferID(1), size: 10, name: "f.bin"))
    let nested = deeplyNestedBatches()
    #expect(nested.count == 65_516)
    let clock = ContinuousClock()
    var outcome: ScriptedSender.Outcome?
    let elapsed = clock.measure {
        outcome = target.scripted(opening: offer, [.message(.data(bytes(5, seed: 1))), .record(nested, isFinal: false)])
            .run(against: &receiver)
    }
    receiver.linkLost(now: .zero)
    let result = try #require(outcome)
    // Refused at the first level, as a malformed message: the file in progress goes.
    #expect(result.receiverError == .transfer(.malformedMessage(.badField)))
    #expect(result.receiverEvents.compactMap(\.fileFailure) == [.senderBrokeProtocol(.malformedMessage(.badField))])
    #expect(exitStatus(.transfer(.malformedMessage(.badField))) == .protocolViolation)
    // The whole session (handshake, a 65 KB record in 269 frames) in a fraction of the seconds
    // and hundreds of MB the recursive parser needed for this one record.
    #expect(elapsed < .seconds(5), "took \(elapsed)")
    expectNothingLeft(target, at: "f.bin")
}

/// How the paced sender's connection to a real receiver ended.
private struct PacedOutcome {
    var receiverError: SessionError?
    var endedAt: Instant
    var completed: Bool
    var events: [ReceiverSession.Event]
}

private func runPaced(_ target: Target, opening: TransferMessage, schedule: [(at: Instant, item: PacedSender.Item)],
                      limit: Duration = .seconds(900)) throws -> PacedOutcome {
    var receiver = target.receiver()
    try receiver.accept(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    var sender = try PacedSender(identity: target.senderID, receiverKey: target.receiverID.publicKey, opening: opening,
                                 schedule: schedule)
    var network = VirtualNetwork.perfect()
    var receiverError: SessionError?
    var completed = false
    do {
        let ending = try network.run(&sender, &receiver, until: Instant.zero.advanced(by: limit)) { _, receiver in
            receiver.connectionComplete
        }
        completed = ending == .done
    } catch {
        if case .b(let failure) = error { receiverError = failure }
    }
    let events = receiver.takeEvents()
    receiver.linkLost(now: network.now)
    receiver.shutdown()
    return PacedOutcome(receiverError: receiverError, endedAt: network.now, completed: completed, events: events)
}

private func seconds(_ value: Int) -> Instant { Instant.zero.advanced(by: .seconds(value)) }

/// Every 29 s (one less than `IdleTimeout`) for ten minutes, a datagram made by `make`.
private func every29Seconds(_ make: @escaping ([[UInt8]]) -> [UInt8]) -> [(at: Instant, item: PacedSender.Item)] {
    stride(from: 29, through: 600, by: 29).map { (at: seconds($0), item: .datagram(make)) }
}

@Test("attack: a stalled sender keeping its connection open with one datagram every 29 s",
      arguments: ["a frame with a bad CRC", "an empty datagram", "a replay of its first frame",
                  "an ack of nothing new", "a frame outside the window"])
func stalledSenderKeepingTheConnectionOpen(variant: String) throws {
    let target = try Target()
    let offer = TransferMessage.offer(.init(id: transferID(2), size: 1_000, name: "stalled.bin"))
    let junk: ([[UInt8]]) -> [UInt8]
    switch variant {
    case "a frame with a bad CRC":
        junk = { _ in
            var frame = FrameCodec.encodeData(sequence: SequenceNumber(2), messageLength: 20, isEnd: true, bytes: bytes(20, seed: 3)[...])
            frame[frame.count - 1] ^= 0xFF
            return frame
        }
    case "an empty datagram":
        junk = { _ in [] }
    case "a replay of its first frame":
        junk = { sent in sent[0] }
    case "an ack of nothing new":
        // The receiver's message 2 (frame 0) is acknowledged already: cumulative 1 again.
        junk = { _ in FrameCodec.encodeAck(cumulative: SequenceNumber(1), selectiveAcks: []) }
    default:
        junk = { _ in FrameCodec.encodeData(sequence: SequenceNumber(4000), messageLength: 3, isEnd: true, bytes: [1, 2, 3][...]) }
    }
    // Five bytes of the file, then nothing but the junk.
    let outcome = try runPaced(target, opening: offer,
                               schedule: [(at: .zero, item: .message(.data(bytes(5, seed: 4))))] + every29Seconds(junk))

    #expect(outcome.receiverError == .linkLost)
    // Dropped 30 s after the sender's last real frame (its acks, at most a few hundred ms in),
    // not 30 s after the last junk: no later than 31 s, where before it lasted past 600 s.
    #expect(outcome.endedAt >= seconds(30) && outcome.endedAt < seconds(31), "ended at \(outcome.endedAt)")
    #expect(exitStatus(.linkLost) == .linkLost)
    // A link lost keeps the partial for a resume (the five bytes); shutdown removes it.
    expectNothingLeft(target, at: "stalled.bin")
}

@Test("attack: control: a slow but valid sender (one record every 29 s) is not dropped")
func slowValidSenderIsNotDropped() throws {
    let target = try Target()
    let chunks = (0..<10).map { bytes(10, seed: UInt64(10 + $0)) }
    let file = chunks.flatMap { $0 }
    let id = transferID(3)
    var schedule: [(at: Instant, item: PacedSender.Item)] = chunks.enumerated().map { index, chunk in
        (at: seconds(29 * (index + 1)), item: .message(.data(chunk)))
    }
    schedule += [(at: seconds(29 * 11), item: .message(.done(id: id, hash: blake2b(file)))),
                 (at: seconds(29 * 12), item: .message(.bye))]
    let outcome = try runPaced(target, opening: .offer(.init(id: id, size: nil, name: "slow.txt")), schedule: schedule)

    #expect(outcome.receiverError == nil)
    #expect(outcome.completed)
    #expect(outcome.endedAt >= seconds(29 * 12))
    #expect(outcome.events.compactMap(\.savedAs) == ["slow.txt"])
    #expect(target.holds("slow.txt", file))
    expectNothingLeft(target, at: nil, besides: ["slow.txt"])
}
