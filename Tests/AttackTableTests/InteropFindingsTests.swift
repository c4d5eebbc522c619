import Foundation
import Handshake
import Keys
import Pipeline
import Session
import Simulation
import Storage
import TestDoubles
import Testing
import Transfer
@testable import BlesendCLI

/// What an independent implementation of the protocol found, used as a hostile peer (issue 9):
/// one test per defect that the in-memory pipeline can show. (The BlueZ ones run in the lab.)

// MARK: - Defect 2: a malformed message from an authenticated receiver

@Test("finding: a malformed message from the pinned receiver ends the session at once",
      arguments: ["confirm with a stored name that is not UTF-8", "confirm with status 99", "reject with reason 99 in message 2"])
func malformedMessageFromTheAuthenticatedReceiver(variant: String) throws {
    let target = try Target()
    let id = transferID(1)
    let receiver = ScriptedReceiver(identity: target.receiverID, message2: { offer in
        variant.hasPrefix("reject") ? [0x07] + offer.id.bytes + [99] : TransferMessage.accept(id: offer.id, offset: 0).encoded()
    }, answer: { message in
        guard case .done(let doneID, _) = message else { return [] }
        return variant.hasPrefix("confirm with a stored name")
            ? [[0x06] + doneID.bytes + [0, 2, 0xC3, 0x28]]
            : [[0x06] + doneID.bytes + [99, 1, 0x41]]
    })
    var sender = SenderSession(identity: target.senderID, receiverKey: target.receiverID.publicKey,
                               files: [MemoryFileSource(name: "f.bin", bytes: bytes(10_000, seed: 2))], makeTransferID: { id })
    let outcome = receiver.run(&sender)

    let expected: TransferMessageError = variant.hasPrefix("confirm with a stored name") ? .badName : .badField
    #expect(outcome.senderError == .transfer(.malformedMessage(expected)))
    #expect(outcome.senderError?.isRecoverable == false, "never a reason to reconnect and send the file again")
    #expect(exitStatus(outcome.senderError ?? .linkLost) == .protocolViolation)
    #expect(outcome.fromSender.filter { if case .done = $0 { true } else { false } }.count == (variant.hasPrefix("reject") ? 0 : 1))
}

// MARK: - Defects 3 and 8: each transfer-level violation by a trusted sender has its own cause

/// A genuine message 1 from `target`'s sender, made afresh (as a second one mid-session would be).
func freshMessage1(_ target: Target, opening: TransferMessage) throws -> [UInt8] {
    var initiator = try NoiseIKInitiator(localStatic: target.senderID.secretKey, remoteStatic: target.receiverID.publicKey.bytes,
                                         prologue: blesendPrologue)
    var payload: [UInt8] = []
    payload.appendBigEndian(LoopbackRun.wallClockBase + 1)
    return try initiator.writeMessage1(payload: payload + opening.encoded())
}

@Test("finding: every way a trusted sender breaks the transfer gets its own cause and message",
      arguments: ["more bytes than offered", "a data message over 4096 bytes", "an empty data message", "an empty batch",
                  "a data message in a final record", "message 1 again mid-session", "a hash that does not match"])
func eachSenderViolationHasItsOwnCause(variant: String) throws {
    let target = try Target()
    var receiver = target.receiver()
    let offer = TransferMessage.offer(.init(id: transferID(1), size: 10, name: "f.bin"))
    let step: ScriptedSender.Step
    let expectedFailure: FileFailure
    var expectedError: SessionError?
    switch variant {
    case "more bytes than offered":
        step = .message(.data(bytes(11, seed: 1)))
        expectedFailure = .senderBrokeProtocol(.moreBytesThanOffered)
        expectedError = .transfer(.moreBytesThanOffered)
    case "a data message over 4096 bytes":
        step = .record([0x03] + bytes(5000, seed: 1), isFinal: false)
        expectedFailure = .senderBrokeProtocol(.malformedMessage(.dataTooLarge))
        expectedError = .transfer(.malformedMessage(.dataTooLarge))
    case "an empty data message":
        step = .record([0x03], isFinal: false)
        expectedFailure = .senderBrokeProtocol(.malformedMessage(.emptyData))
        expectedError = .transfer(.malformedMessage(.emptyData))
    case "an empty batch":
        step = .record([0x0E], isFinal: false)
        expectedFailure = .senderBrokeProtocol(.malformedMessage(.emptyBatch))
        expectedError = .transfer(.malformedMessage(.emptyBatch))
    case "a data message in a final record":
        step = .record([0x03, 1, 2, 3], isFinal: true)
        expectedFailure = .senderBrokeProtocol(.finalityMismatch)
        expectedError = .transfer(.finalityMismatch)
    case "message 1 again mid-session":
        // After an accepted message 1 everything is a record: a second message 1 fails
        // authentication as one (docs/protocol.md §3), and the file in progress goes.
        step = .unsealed(try freshMessage1(target, opening: offer))
        expectedFailure = .tampered
    default:
        step = .message(.done(id: transferID(1), hash: blake2b([9])))
        expectedFailure = .integrity
    }
    let prefix: [ScriptedSender.Step] = variant.hasPrefix("a hash") ? [.message(.data(bytes(10, seed: 1)))] : []
    let outcome = target.scripted(opening: offer, prefix + [step]).run(against: &receiver)
    receiver.linkLost(now: .zero)

    #expect(outcome.receiverEvents.compactMap(\.fileFailure) == [expectedFailure])
    if variant == "message 1 again mid-session" {
        guard case .record = outcome.receiverError else {
            Issue.record("expected a record that failed authentication, got \(String(describing: outcome.receiverError))")
            return
        }
    } else {
        #expect(outcome.receiverError == expectedError)
    }
    expectNothingLeft(target, at: "f.bin")
}

@Test("finding: the receiver's messages for failed files are all different, and only a hash mismatch speaks of the hash")
func receiverMessagesForFailedFilesDiffer() {
    let failures: [FileFailure] = [
        .integrity, .tampered, .senderBrokeProtocol(.moreBytesThanOffered),
        .senderBrokeProtocol(.malformedMessage(.dataTooLarge)), .senderBrokeProtocol(.malformedMessage(.emptyData)),
        .senderBrokeProtocol(.malformedMessage(.emptyBatch)),
        .senderBrokeProtocol(.finalityMismatch), .senderBrokeProtocol(.unexpected(.offer)),
        .couldNotStore(StorageError(.noSpace, "disk full")), .rejected(.badName), .rejected(.tooLarge),
    ]
    let messages = failures.map { CLIError(receiving: $0, name: "f.bin from alice").message }
    #expect(Set(messages).count == failures.count, "\(messages)")
    #expect(messages.filter { $0.contains("hash") }.count == 1, "\(messages)")
    #expect(CLIError(receiving: .tampered, name: "f").status == .integrity)
    #expect(CLIError(receiving: .senderBrokeProtocol(.moreBytesThanOffered), name: "f").status == .protocolViolation)
}

// MARK: - Defect 4: the refusal reason reaches the log unchanged

@Test("finding: the connection's end after a refusal carries the refusal's reason",
      arguments: ["untrusted sender", "replayed timestamp"])
func refusalReasonIsKept(variant: String) throws {
    let target = try Target()
    var receiver = target.receiver(trusting: variant != "untrusted sender")
    let script = target.scripted(opening: .offer(.init(id: transferID(1), size: 0, name: "f")), [.message(.bye)])
    let expected: SessionError.RefusalReason
    if variant == "untrusted sender" {
        expected = .unknownSender(fingerprint: target.senderID.publicKey.fingerprint)
    } else {
        _ = script.run(against: &receiver)
        receiver.linkLost(now: .zero)
        expected = .replayedHandshake(sender: "alice")
    }
    let outcome = script.run(against: &receiver)
    #expect(outcome.refused)
    #expect(outcome.receiverEvents.compactMap(\.refusal) == [expected])
    #expect(throws: SessionError.refusedSender(expected)) { try receiver.handleTimers(now: Instant.zero.advanced(by: .seconds(3))) }
}

// MARK: - Defect 5: a timestamp from the future

@Test("finding: a message 1 stamped far ahead is refused and does not lock the sender out")
func timestampFarAheadDoesNotLockOut() throws {
    let target = try Target()
    var receiver = target.receiver()
    let opening = TransferMessage.offer(.init(id: transferID(1), size: 0, name: "f"))
    var future = target.scripted(opening: opening, [.message(.bye)])
    future.wallClock = .max
    let refused = future.run(against: &receiver)
    receiver.linkLost(now: .zero)
    #expect(refused.refused)
    #expect(refused.receiverEvents.compactMap(\.refusal) == [.clockAhead(sender: "alice", seconds: (UInt64.max - LoopbackRun.wallClockBase) / 1_000_000_000)])

    // The honest sender right after: served.
    let honest = target.scripted(opening: opening, [.message(.done(id: transferID(1), hash: blake2b([]))), .message(.bye)])
    let served = honest.run(against: &receiver)
    receiver.linkLost(now: .zero)
    #expect(!served.refused)
    #expect(served.replies.first == .accept(id: transferID(1), offset: 0))
}

@Test("finding: a sender clock up to 600 s ahead is accepted, beyond it refused", arguments: [599, 601])
func timestampAheadBound(secondsAhead: UInt64) throws {
    let target = try Target()
    var receiver = target.receiver()
    var script = target.scripted(opening: .offer(.init(id: transferID(1), size: 0, name: "f")), [.message(.bye)])
    script.wallClock = LoopbackRun.wallClockBase + secondsAhead * 1_000_000_000
    let outcome = script.run(against: &receiver)
    receiver.linkLost(now: .zero)
    #expect(outcome.refused == (secondsAhead > 600))
}

// MARK: - Defect 7: every bad name rejects that one file, wherever the offer rides

let badNames: [(String, [UInt8])] = [
    ("not UTF-8", [0xC3, 0x28]), ("empty", []), ("..", Array("..".utf8)), ("/", Array("/".utf8)),
]

@Test("finding: a bad name in message 1 or in a record rejects that file and the session goes on",
      arguments: badNames.indices, ["message 1", "record"])
func badNamesRejectTheFileOnly(index: Int, place: String) throws {
    let (label, name) = badNames[index]
    let target = try Target()
    var receiver = target.receiver()
    let bad = TransferMessage.offer(.init(id: transferID(1), size: 3, nameBytes: name))
    let good = TransferMessage.offer(.init(id: transferID(2), size: 3, name: "good.txt"))
    let goodFile: [ScriptedSender.Step] = [.message(.data([7, 7, 7])), .message(.done(id: transferID(2), hash: blake2b([7, 7, 7])))]
    let outcome: ScriptedSender.Outcome
    if place == "message 1" {
        outcome = target.scripted(opening: bad, [.message(good)] + goodFile + [.message(.bye)]).run(against: &receiver)
        #expect(outcome.replies.first == .reject(id: transferID(1), reason: .badName), "\(label)")
    } else {
        outcome = target.scripted(opening: good, goodFile + [.message(bad), .message(.bye)]).run(against: &receiver)
        #expect(outcome.replies.contains(.reject(id: transferID(1), reason: .badName)), "\(label)")
    }
    receiver.linkLost(now: .zero)
    #expect(!outcome.refused, "\(label)")
    #expect(outcome.receiverError == nil, "\(label): \(String(describing: outcome.receiverError))")
    #expect(outcome.replies.last == .bye, "\(label): the session goes on to its goodbye")
    #expect(outcome.receiverEvents.compactMap(\.savedAs) == ["good.txt"])
    #expect(outcome.receiverEvents.compactMap(\.fileFailure) == [.rejected(.badName)])
    expectNothingLeft(target, at: nil, besides: ["good.txt"])
}
