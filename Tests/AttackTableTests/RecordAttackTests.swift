#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import Storage
import TestDoubles
import Testing
import Transfer
@testable import BlesendCLI

/// docs/threat-model.md, attack table, "Records and transfer" rows.

@Test("attack: records tampered with, replayed, reordered, dropped, or sent after the final record",
      arguments: ["tampered", "replayed", "reordered", "dropped", "after the final record"])
func recordsTamperedReplayedReorderedDroppedOrAfterFinal(variant: String) throws {
    let target = try Target()
    var receiver = target.receiver()
    let receiverError: SessionError?
    let receiverEvents: [ReceiverSession.Event]
    var aimed = "secret.txt"
    var kept: [String] = []
    if variant == "after the final record" {
        // A trusted sender finishes one file and says goodbye in a final record, then sends
        // another file's records after it.
        let first: [UInt8] = [1, 2, 3]
        let smuggled: [UInt8] = Array("smuggled".utf8)
        let script = target.scripted(
            opening: .offer(.init(id: transferID(1), size: 3, name: "first.txt")),
            [.message(.data(first)), .message(.done(id: transferID(1), hash: blake2b(first))), .message(.bye),
             .message(.offer(.init(id: transferID(2), size: UInt64(smuggled.count), name: "smuggled.txt"))),
             .message(.data(smuggled)), .message(.done(id: transferID(2), hash: blake2b(smuggled)))])
        let outcome = script.run(against: &receiver)
        receiver.linkLost(now: .zero)
        receiverError = outcome.receiverError
        receiverEvents = outcome.receiverEvents
        aimed = "smuggled.txt"
        kept = ["first.txt"]
        #expect(receiverEvents.compactMap(\.savedAs) == ["first.txt"])
    } else {
        // An attacker in the middle handles whole sealed records between an honest pair.
        nonisolated(unsafe) var held: [UInt8] = []
        let outcome = relay(target, receiver: &receiver, files: [MemoryFileSource(name: "secret.txt", bytes: secret)]) { direction, index, message in
            guard direction == .senderToReceiver else { return [message] }
            switch (variant, index) {
            case ("tampered", 2):
                var altered = message
                altered[altered.count / 2] ^= 0x40
                return [altered]
            case ("replayed", 2): return [message, message]
            case ("reordered", 2): held = message; return []
            case ("reordered", 3): return [message, held]
            case ("dropped", 2): return []
            default: return [message]
            }
        }
        receiverError = outcome.receiverError
        receiverEvents = outcome.receiverEvents
        #expect(!outcome.senderFinished)
        #expect(outcome.senderEvents.compactMap(\.savedAs).isEmpty)
        #expect(receiverEvents.compactMap(\.fileFailure) == [.tampered], "the partial is dropped, not kept for a resume")
        #expect(receiverExitStatus(.tampered) == .integrity)
    }
    guard case .record(let cause) = receiverError else {
        Issue.record("\(variant): expected an integrity error, got \(String(describing: receiverError))")
        return
    }
    #expect(cause == (variant == "after the final record" ? .recordAfterFinal : .authenticationFailed))
    #expect(exitStatus(receiverError ?? .linkLost) == .integrity)
    expectNothingLeft(target, at: aimed, besides: kept)
}

@Test("attack: a transfer truncated before the final record", arguments: ["partial expires", "receiver stops"])
func transferTruncatedBeforeTheFinalRecord(variant: String) throws {
    let target = try Target()
    var receiver = target.receiver()
    // Everything after the third record is swallowed: no `done`, no `bye`; both ends time out.
    let outcome = relay(target, receiver: &receiver, files: [MemoryFileSource(name: "secret.txt", bytes: secret)]) { direction, index, message in
        direction == .senderToReceiver && index >= 3 ? [] : [message]
    }
    #expect(outcome.senderError == .linkLost || outcome.receiverError == .linkLost)
    #expect(exitStatus(.linkLost) == .linkLost)
    #expect(!outcome.senderFinished)
    #expect(!target.exists("secret.txt"))
    // What arrived is kept so the sender can resume, in a file with no name in the folder
    // (O_TMPFILE, held open by the receiver): nobody can read, swap or link it...
    #expect(receiver.partialTransfers == 1)
    #expect(target.entries().isEmpty, "\(target.entries())")
    // ... until it expires (checked when the next connection ends) or the receiver stops.
    if variant == "partial expires" {
        let later = Instant.zero.advanced(by: .seconds(601))
        try receiver.accept(maxDatagramSize: 244, now: later, wallClock: LoopbackRun.wallClockBase + later.nanoseconds)
        receiver.linkLost(now: later)
    } else {
        receiver.shutdown()
    }
    #expect(receiver.partialTransfers == 0)
    expectNothingLeft(target, at: "secret.txt")
}

@Test("attack: an offer claiming an absurd size",
      arguments: ["beyond the receiver's limit", "beyond the free space", "2^64 - 2 bytes"])
func offerClaimingAnAbsurdSize(variant: String) throws {
    let target = try Target()
    var receiver: ReceiverSession
    let claimed: UInt64
    switch variant {
    case "beyond the receiver's limit":
        receiver = target.receiver(maxFileSize: 1 << 20)
        claimed = (1 << 20) + 1
    case "beyond the free space":
        receiver = target.receiver()
        var fs = statvfs()
        #expect(statvfs(target.out, &fs) == 0)
        // 1 GiB beyond what is free now: other programs on the machine free space meanwhile too.
        claimed = min(UInt64(fs.f_bavail) * UInt64(fs.f_frsize) + (1 << 30), (1 << 40) - 1)
    default:
        receiver = target.receiver()
        claimed = UInt64.max - 1
    }
    var sender = target.sender([LyingFileSource(name: "huge.bin", claimedSize: claimed, bytes: [1, 2, 3])])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))

    #expect(outcome.finished, "the session goes on (and ends): the offer is refused, not the sender")
    #expect(outcome.senderEvents.compactMap(\.fileFailure) == [.rejected(.tooLarge)])
    #expect(senderExitStatus(.rejected(.tooLarge)) == .fileRejected)
    let failures = outcome.receiverEvents.compactMap(\.fileFailure)
    #expect(failures.count == 1)
    if variant == "beyond the free space" {
        guard case .couldNotStore(let error) = failures.first else { Issue.record("\(failures)"); return }
        #expect(error.code == .noSpace && error.detail.contains("free"))
        #expect(receiverExitStatus(.couldNotStore(error)) == .localIO)
    } else {
        #expect(failures == [.rejected(.tooLarge)])
        #expect(receiverExitStatus(.rejected(.tooLarge)) == .fileRejected)
    }
    expectNothingLeft(target, at: "huge.bin")
}

@Test("attack: more bytes than offered", arguments: ["one byte more in a record", "a record more", "a stream beyond the receiver's limit"])
func moreBytesThanOffered(variant: String) throws {
    let target = try Target()
    var receiver = variant.hasPrefix("a stream") ? target.receiver(maxFileSize: 8192) : target.receiver()
    let script: ScriptedSender
    switch variant {
    case "one byte more in a record":
        script = target.scripted(opening: .offer(.init(id: transferID(1), size: 10, name: "f.bin")),
                                 [.message(.data(bytes(11, seed: 1)))])
    case "a record more":
        script = target.scripted(opening: .offer(.init(id: transferID(1), size: 10, name: "f.bin")),
                                 [.message(.data(bytes(10, seed: 1))), .message(.data(bytes(5, seed: 2)))])
    default:
        script = target.scripted(opening: .offer(.init(id: transferID(1), size: nil, name: "f.bin")),
                                 (0..<3).map { .message(.data(bytes(4096, seed: UInt64($0)))) })
    }
    let outcome = script.run(against: &receiver)
    receiver.linkLost(now: .zero)
    #expect(outcome.replies.first == .accept(id: transferID(1), offset: 0))
    if variant.hasPrefix("a stream") {
        // A stream offered no size, so it broke no promise: it outgrew what this receiver takes,
        // and is refused as too large mid-transfer; the session goes on.
        #expect(outcome.receiverError == nil)
        #expect(outcome.replies.dropFirst().first == .reject(id: transferID(1), reason: .tooLarge))
        #expect(outcome.receiverEvents.compactMap(\.fileFailure) == [.rejected(.tooLarge)])
    } else {
        #expect(outcome.receiverError == .transfer(.moreBytesThanOffered))
        #expect(exitStatus(outcome.receiverError ?? .linkLost) == .protocolViolation)
        #expect(outcome.receiverEvents.compactMap(\.fileFailure) == [.senderBrokeProtocol(.moreBytesThanOffered)])
        #expect(receiverExitStatus(.senderBrokeProtocol(.moreBytesThanOffered)) == .protocolViolation)
    }
    expectNothingLeft(target, at: "f.bin")
}

/// (name offered, name stored or nil when refused, path the name aims at relative to the folder)
let hostileNames: [(String, String?, String?)] = [
    ("../escape.txt", "escape.txt", "../escape.txt"),
    ("sub/dir/file.txt", "file.txt", "sub/dir/file.txt"),
    ("..", nil, nil),
    ("../", nil, nil),
    ("a\u{0}b.txt", "a_b.txt", "a\u{0}b.txt"),
    ("\u{1B}[2Jbell\u{07}.txt", "_[2Jbell_.txt", "\u{1B}[2Jbell\u{07}.txt"),
    ("invoice\u{202E}fdp.exe", "invoice_fdp.exe", "invoice\u{202E}fdp.exe"),
    (".bashrc", "bashrc", ".bashrc"),
    (".x.AAAAAA.blesend-part", "x.AAAAAA.blesend-part", ".x.AAAAAA.blesend-part"),
    (String(repeating: "é", count: 150), String(repeating: "é", count: 127), String(repeating: "é", count: 150)),
]

@Test("attack: a file name with /, .., NUL or control characters, or over 255 bytes", arguments: hostileNames.indices)
func hostileFileNames(index: Int) throws {
    let (name, expected, aimed) = hostileNames[index]
    let target = try Target()
    var receiver = target.receiver()
    var sender = target.sender([MemoryFileSource(name: name, bytes: [7, 7, 7])])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))
    #expect(outcome.finished, "\(outcome.senderErrors) \(outcome.receiverErrors)")
    #expect(outcome.senderErrors.isEmpty && outcome.receiverErrors.isEmpty)
    #expect((try? FileManager.default.contentsOfDirectory(atPath: target.root)) == ["out"], "nothing lands beside the folder")
    if let expected {
        #expect(outcome.receiverEvents.compactMap(\.savedAs) == [expected])
        #expect(outcome.senderEvents.compactMap(\.savedAs) == [expected])
        #expect(outcome.senderEvents.compactMap(\.fileFailure).isEmpty, "exit 0: stored under a safe name")
        #expect(target.holds(expected, [7, 7, 7]))
        #expect(expected.utf8.count <= 255)
        expectNothingLeft(target, at: aimed, besides: [expected])
    } else {
        #expect(outcome.senderEvents.compactMap(\.fileFailure) == [.rejected(.badName)])
        #expect(outcome.receiverEvents.compactMap(\.fileFailure) == [.rejected(.badName)])
        #expect(senderExitStatus(.rejected(.badName)) == .fileRejected)
        #expect(receiverExitStatus(.rejected(.badName)) == .fileRejected)
        expectNothingLeft(target, at: aimed)
    }
}

@Test("attack: a file name with / aiming at an absolute path")
func absoluteFileName() throws {
    let target = try Target()
    var receiver = target.receiver()
    let aimed = target.root + "/absolute.txt"
    var sender = target.sender([MemoryFileSource(name: aimed, bytes: [7])])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))
    #expect(outcome.finished)
    #expect(outcome.receiverEvents.compactMap(\.savedAs) == ["absolute.txt"])
    #expect(!FileManager.default.fileExists(atPath: aimed))
    expectNothingLeft(target, at: "../absolute.txt", besides: ["absolute.txt"])
}

@Test("attack: a file name whose length runs past the end of the offer")
func fileNameOverrunningTheOffer() throws {
    let target = try Target()
    var receiver = target.receiver()
    // A name length of 255 with 9 name bytes: no valid offer, whatever the bytes claim.
    var opening = TransferMessage.offer(.init(id: transferID(1), size: 3, name: "short.txt")).encoded()
    opening[1 + 16 + 8] = 255
    let outcome = ScriptedSender(identity: target.senderID, receiverKey: target.receiverID.publicKey,
                                 openingBytes: opening, script: []).run(against: &receiver)
    receiver.linkLost(now: .zero)
    #expect(outcome.refused)
    #expect(outcome.receiverEvents.compactMap(\.refusal) == [.badOpening(sender: "alice")])
    #expect(exitStatus(.refusedByPeer) == .peerRefused)
    expectNothingLeft(target, at: "short.txt")
}
