#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Framing
import Handshake
import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
@testable import Storage
import TestDoubles
import Testing
import Transfer
@testable import BlesendCLI

/// docs/threat-model.md, attack table, "Resources" rows.

/// The most a peer that has not authenticated can make a receiver hold for its connection, in
/// fragment bytes: a full pre-authentication reorder buffer (`handshakeReceiveWindow - 1`
/// out-of-order frames, each at most a datagram's fragment) plus one open message of at most
/// `maxHandshakeMessageLength`. At the largest datagram (510 bytes): 31 * 506 + 512 = 16,198.
func preAuthenticationBound(datagramSize: Int) -> Int {
    (handshakeReceiveWindow - 1) * (datagramSize - FrameLayout.overhead) + maxHandshakeMessageLength
}

/// What a flood did to the receiver's connection.
struct FloodEffect {
    var error: SessionError?
    var maxBuffered = 0
    var handshakeAttempts = 0
    var datagramsIn = 0
    var datagramsOut = 0
    var events: [ReceiverSession.Event] = []
}

/// Feeds `datagrams` to a receiver that has just accepted a connection, then runs its timers
/// until the connection ends (as the driver would end it).
func flood(_ receiver: inout ReceiverSession, datagramSize: Int, _ datagrams: some Sequence<[UInt8]>) -> FloodEffect {
    var effect = FloodEffect()
    var now = Instant.zero
    func measure(_ receiver: inout ReceiverSession) {
        effect.maxBuffered = max(effect.maxBuffered, receiver.linkBufferedInboundBytes ?? 0)
        while receiver.nextDatagram(now: now) != nil { effect.datagramsOut += 1 }
        effect.events += receiver.takeEvents()
    }
    do {
        try receiver.accept(maxDatagramSize: datagramSize, now: now, wallClock: LoopbackRun.wallClockBase + now.nanoseconds)
        for datagram in datagrams {
            effect.datagramsIn += 1
            defer { measure(&receiver) }
            try receiver.receive(datagram: datagram, now: now)
        }
        // Then silence: the handshake deadline (or the refusal's) ends the connection.
        while let next = receiver.nextDeadline, now < Instant.zero.advanced(by: .seconds(60)) {
            now = max(now, next)
            try receiver.handleTimers(now: now)
            measure(&receiver)
        }
    } catch {
        effect.error = error
    }
    measure(&receiver)
    receiver.linkLost(now: now)
    effect.handshakeAttempts = effect.events.filter { $0.refusal != nil || $0.isAuthenticated }.count
    return effect
}

@Test("attack: flooding with frames before authentication",
      arguments: ["random datagrams", "valid frames filling the reorder window", "start frames announcing 65535 bytes", "bogus message 1s"])
func floodingBeforeAuthentication(variant: String) throws {
    let target = try Target()
    var receiver = target.receiver()
    let size = 510   // the largest datagram: the worst case for memory
    var random = SeededRandom(seed: 42)
    let effect: FloodEffect
    switch variant {
    case "random datagrams":
        let datagrams = (0..<20_000).lazy.map { _ in
            (0..<Int.random(in: 1...size, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        effect = flood(&receiver, datagramSize: size, datagrams)
        #expect(effect.maxBuffered == 0, "garbage is dropped without keeping anything")
        #expect(effect.error == .handshakeTimeout)
    case "valid frames filling the reorder window":
        // Every sequence number but the next expected one, twice: what fits the window is
        // buffered once, the rest is dropped as out of window or duplicate.
        let fragment = bytes(size - FrameLayout.overhead, seed: 5)[...]
        let datagrams = (0..<2).lazy.flatMap { _ in
            (1..<SequenceNumber.modulus).lazy.map { FrameCodec.encodeData(sequence: SequenceNumber($0), messageLength: nil, isEnd: false, bytes: fragment) }
        }
        effect = flood(&receiver, datagramSize: size, datagrams)
        #expect(effect.maxBuffered == (handshakeReceiveWindow - 1) * fragment.count)
        #expect(effect.error == .handshakeTimeout)
    case "start frames announcing 65535 bytes":
        let datagrams = (0..<1_000).lazy.map { n in
            FrameCodec.encodeData(sequence: SequenceNumber(n % SequenceNumber.modulus), messageLength: 65_535, isEnd: false,
                                  bytes: bytes(size - FrameLayout.overhead - 2, seed: UInt64(n))[...])
        }
        effect = flood(&receiver, datagramSize: size, datagrams)
        #expect(effect.datagramsIn == 1, "the first one ends the connection")
        #expect(effect.error == .framing(.protocolViolation(.messageTooLarge(length: 65535, limit: maxHandshakeMessageLength))))
        #expect(effect.maxBuffered == 0)
    default:
        // 1,000 complete, well-framed, message-1-sized messages of random bytes, in order.
        let datagrams = (0..<1_000).lazy.map { n in
            FrameCodec.encodeData(sequence: SequenceNumber(n), messageLength: 385, isEnd: true, bytes: bytes(385, seed: UInt64(n))[...])
        }
        effect = flood(&receiver, datagramSize: size, datagrams)
        #expect(effect.datagramsIn == 1_000)
        #expect(effect.events.compactMap(\.refusal) == [.malformedHandshake])
        #expect(effect.error == .refusedSender(.malformedHandshake), "the refusal's deadline ends the connection")
    }
    #expect(effect.handshakeAttempts <= 1, "at most one message 1 is opened (two X25519 operations) per connection")
    #expect(effect.maxBuffered <= preAuthenticationBound(datagramSize: size))
    #expect(effect.datagramsOut <= effect.datagramsIn + 8, "no amplification: at most about one ack per datagram")
    if let error = effect.error { #expect([.linkLost, .protocolViolation, .peerRefused].contains(exitStatus(error))) }
    #expect(receiver.partialTransfers == 0)
    expectNothingLeft(target, at: "secret.txt")

    // A real sender still gets through afterwards.
    var sender = target.sender([MemoryFileSource(name: "secret.txt", bytes: secret)])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))
    #expect(outcome.finished)
    #expect(target.holds("secret.txt", secret))
    expectNothingLeft(target, at: "secret-1.txt", besides: ["secret.txt"])
}

/// A file that fills the disk from another writer the moment the sender starts reading it (after
/// the receiver accepted the offer: the free-space check at the offer passed).
final class DiskFillingSource: FileSource {
    let name = "report.pdf"
    let bytes: [UInt8]
    let fill: () -> Void
    private var filled = false

    init(bytes: [UInt8], fill: @escaping () -> Void) {
        self.bytes = bytes
        self.fill = fill
    }

    var size: UInt64? { UInt64(bytes.count) }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        if !filled {
            filled = true
            fill()
        }
        guard offset < UInt64(bytes.count) else { return [] }
        return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
    }
}

@Test("attack: disk full during a receive (tmpfs, in-process)",
      .enabled(if: Tmpfs.available, "needs permission to mount a tmpfs (root); the lab case covers it anyway"),
      arguments: ["a stream", "a file whose size fitted at the offer"])
func diskFullDuringReceive(variant: String) throws {
    let target = try Target()
    try target.mountTmpfs(kilobytes: 64)
    var receiver = target.receiver()
    let source: any FileSource
    var kept: [String] = []
    if variant == "a stream" {
        source = MemoryFileSource(name: "report.pdf", bytes: bytes(200_000, seed: 1), asStream: true)
    } else {
        let filler = target.out + "/filler"
        source = DiskFillingSource(bytes: bytes(48_000, seed: 1)) {
            _ = FileManager.default.createFile(atPath: filler, contents: Data(count: 40_000))
        }
        kept = ["filler"]
    }
    var sender = target.sender([source])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))

    #expect(outcome.finished, "the session goes on: one file failed")
    expectCouldNotStore(outcome, because: "No space left on device")
    expectNothingLeft(target, at: "report.pdf", besides: kept)
}

@Test("attack: the target folder not writable (read-only tmpfs, in-process)",
      .enabled(if: Tmpfs.available, "needs permission to mount a tmpfs (root); the lab case covers it anyway"),
      arguments: ["checked when the receiver starts", "turned read-only while it runs"])
func targetFolderNotWritable(variant: String) throws {
    let target = try Target()
    try target.mountTmpfs(kilobytes: 64, readOnly: true)
    if variant == "checked when the receiver starts" {
        // What blerecv runs before it advertises.
        #expect {
            try target.store.checkWritable()
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .notWritable && error.detail.contains("Read-only file system") && exitStatus(error) == .localIO
        }
    } else {
        var receiver = target.receiver()
        var sender = target.sender([MemoryFileSource(name: "report.pdf", bytes: secret)])
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))
        #expect(outcome.finished)
        expectCouldNotStore(outcome, because: "Read-only file system")
    }
    expectNothingLeft(target, at: "report.pdf")
}

@Test("attack: the target file already existing", arguments: ["kept, the new one numbered", "replaced with --force", "a 255-byte name taken"])
func targetFileAlreadyExisting(variant: String) throws {
    let target = try Target(overwrite: variant == "replaced with --force")
    let name = variant == "a 255-byte name taken" ? String(repeating: "n", count: 251) + ".pdf" : "report.pdf"
    let old = Array("old contents".utf8)
    #expect(FileManager.default.createFile(atPath: target.out + "/" + name, contents: Data(old)))
    var receiver = target.receiver()
    var sender = target.sender([MemoryFileSource(name: name, bytes: secret)])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 244))
    #expect(outcome.finished)
    #expect(outcome.senderEvents.compactMap(\.fileFailure).isEmpty, "exit 0")
    let stored = outcome.receiverEvents.compactMap(\.savedAs)
    switch variant {
    case "replaced with --force":
        #expect(stored == [name])
        #expect(target.holds(name, secret))
        expectNothingLeft(target, at: "report-1.pdf", besides: [name])
    case "a 255-byte name taken":
        let numbered = String(repeating: "n", count: 249) + "-1.pdf"
        #expect(stored == [numbered])
        #expect(numbered.utf8.count == 255)
        #expect(target.contents(name) == old, "the existing file is untouched")
        #expect(target.holds(numbered, secret))
        expectNothingLeft(target, at: nil, besides: [name, numbered])
    default:
        #expect(stored == ["report-1.pdf"])
        #expect(outcome.senderEvents.compactMap(\.savedAs) == ["report-1.pdf"], "the sender is told the stored name")
        #expect(target.contents(name) == old, "the existing file is untouched")
        #expect(target.holds("report-1.pdf", secret))
        expectNothingLeft(target, at: "report-2.pdf", besides: [name, "report-1.pdf"])
    }
}

@Test("attack: a trusted sender abandoning transfer after transfer")
func trustedSenderAbandoningTransfers() throws {
    let target = try Target()
    // Named temporaries (the fallback where the file system has no O_TMPFILE), so that which
    // partials are kept shows in the folder.
    target.store.unnamedFiles = false
    var receiver = target.receiver()
    for n in 0..<10 {
        let at = Instant.zero.advanced(by: .seconds(n))
        var sender = target.scripted(opening: .offer(.init(id: transferID(UInt64(n)), size: 1_000_000, name: "f\(n).bin")),
                                     [.message(.data(bytes(100, seed: UInt64(n))))])
        sender.wallClock += UInt64(n)   // a fresh handshake each time, not a replay
        let outcome = sender.run(against: &receiver, now: at)
        #expect(outcome.replies.first == .accept(id: transferID(UInt64(n)), offset: 0))
        receiver.linkLost(now: at)   // the sender walks away mid-file
    }
    #expect(receiver.partialTransfers == 4, "at most four interrupted transfers per sender")
    let temporaries = target.entries().filter { $0.hasSuffix(DirectoryFileStore.temporarySuffix) }
    #expect(temporaries.count == 4)
    #expect(temporaries.allSatisfy { name in (6..<10).contains { name.hasPrefix(".f\($0).bin.") } }, "the newest are kept: \(temporaries)")
    #expect(!target.exists("f9.bin"))
    receiver.shutdown()
    expectNothingLeft(target, at: "f9.bin")
}

@Test("the pre-authentication limits never hold up an honest handshake", arguments: [8, 20, 244, 510])
func preAuthenticationLimitsLetHonestHandshakesThrough(datagramSize: Int) throws {
    let target = try Target()
    var receiver = target.receiver()
    // The longest offer there is (a 255-byte name): message 1 at its largest, 385 bytes.
    let name = String(repeating: "n", count: 255)
    var sender = target.sender([MemoryFileSource(name: name, bytes: secret)])
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: datagramSize))
    #expect(outcome.finished)
    #expect(outcome.connections == 1)
    #expect(outcome.senderErrors.isEmpty && outcome.receiverErrors.isEmpty)
    #expect(target.holds(name, secret))
}

/// One file the receiver could not store because of `reason` (an errno text): the sender hears
/// "refused" (72), the receiver reports a local I/O failure (71).
private func expectCouldNotStore(_ outcome: LoopbackRun.Outcome, because reason: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(outcome.senderEvents.compactMap(\.fileFailure) == [.rejected(.couldNotStore)], sourceLocation: sourceLocation)
    #expect(senderExitStatus(.rejected(.couldNotStore)) == .fileRejected, sourceLocation: sourceLocation)
    let failures = outcome.receiverEvents.compactMap(\.fileFailure)
    guard case .couldNotStore(let error) = failures.first, failures.count == 1 else {
        Issue.record("receiver: \(failures)", sourceLocation: sourceLocation)
        return
    }
    #expect(error.detail.contains(reason), "\(error)", sourceLocation: sourceLocation)
    #expect(receiverExitStatus(.couldNotStore(error)) == .localIO, sourceLocation: sourceLocation)
}
