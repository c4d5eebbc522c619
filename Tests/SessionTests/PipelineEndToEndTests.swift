import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import TestDoubles
import Testing
import Transfer

/// Two endpoints, each with its own keys, wired through the whole stack in memory.
struct Pair {
    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    let store = MemoryFileStore()
    var trusted = true

    func endpoints(files: [any FileSource], pinned: PublicKey? = nil, configuration: SessionConfiguration = .init())
        -> (SenderSession, ReceiverSession) {
        let trust = TrustStore(peers: trusted ? [.init(name: "alice", key: senderID.publicKey)] : [])
        let sender = SenderSession(identity: senderID, receiverKey: pinned ?? receiverID.publicKey, files: files, configuration: configuration)
        let receiver = ReceiverSession(identity: receiverID, trust: trust, store: store, configuration: configuration)
        return (sender, receiver)
    }
}

func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededRandom(seed: seed)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
}

let mtus = [23, 185, 247, 517]

/// What a sender writes at ATT MTU `mtu` over BlueZ: `min(mtu - 3, 510)`, the BlueZ module's
/// `attPayloadSize(mtu:)` (this target does not depend on BlueZ).
func writeDatagramSize(mtu: Int) -> Int { max(0, min(mtu - 3, 510)) }

@Test(arguments: mtus)
func filesOfEverySizeArriveOnACleanLink(mtu: Int) throws {
    let payload = writeDatagramSize(mtu: mtu)
    for size in [0, 1, mtu - 1, mtu + 1, 1 << 20] {
        let pair = Pair()
        let data = bytes(size, seed: UInt64(size))
        var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "f\(size)", bytes: data)])
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: payload))
        #expect(outcome.finished, "mtu \(mtu) size \(size): \(outcome.senderErrors)")
        #expect(pair.store.committed["f\(size)"] == data, "mtu \(mtu) size \(size)")
        #expect(pair.store.openTemporaries == 0)
        #expect(outcome.connections == 1)
    }
}

@Test(arguments: mtus)
func filesArriveUnderLossDuplicationReorderingAndCorruption(mtu: Int) throws {
    let payload = writeDatagramSize(mtu: mtu)
    var options = LoopbackRun.Options(maxDatagramSize: payload)
    options.faults = FaultProfile(loss: 0.05, duplication: 0.02, reordering: 0.05, corruption: 0.01)
    for size in [0, 1, mtu - 1, mtu + 1, 1 << 20] {
        let pair = Pair()
        let data = bytes(size, seed: UInt64(size) &+ 7)
        var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "f", bytes: data)])
        options.seed = UInt64(mtu * 1000 + size)
        let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
        #expect(outcome.finished, "mtu \(mtu) size \(size): \(outcome.senderErrors) \(outcome.receiverErrors)")
        #expect(pair.store.committed["f"] == data, "mtu \(mtu) size \(size)")
        #expect(pair.store.openTemporaries == 0)
    }
}

@Test(arguments: mtus)
func aCutLinkReconnectsAndResumes(mtu: Int) throws {
    let payload = writeDatagramSize(mtu: mtu)
    let size = 1 << 20
    let pair = Pair()
    let data = bytes(size, seed: 99)
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "big", bytes: data)])
    var options = LoopbackRun.Options(maxDatagramSize: payload)
    // The simulation has no bandwidth limit: a window leaves at once. Cut only after more than a
    // window, so that data has reached the receiver before each cut.
    let frames = size / payload
    let spacing = SessionConfiguration().link.window + 64
    options.cutsAfterDatagrams = [max(frames / 5, spacing), max(frames / 2, 2 * spacing), max(frames * 4 / 5, 3 * spacing)]
    options.faults = FaultProfile(loss: 0.05, duplication: 0.02, reordering: 0.05, corruption: 0.01)
    options.seed = UInt64(mtu)
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
    #expect(outcome.finished, "\(outcome.senderErrors) \(outcome.receiverErrors)")
    #expect(outcome.connections == 4)
    #expect(pair.store.committed["big"] == data)
    #expect(pair.store.openTemporaries == 0)
    let resumed = outcome.senderEvents.compactMap { event -> UInt64? in
        if case .transfer(.fileStarted(_, _, _, let at)) = event, at > 0 { return at }
        return nil
    }
    #expect(resumed.count == 3, "every reconnect resumes past zero: \(resumed)")
}

@Test func anMTUChangeMidTransferIsHandled() throws {
    let pair = Pair()
    let data = bytes(200_000, seed: 5)
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "m", bytes: data)])
    var options = LoopbackRun.Options(maxDatagramSize: 244)
    options.mtuChange = (afterDatagrams: 300, size: 20)
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: options)
    #expect(outcome.finished)
    #expect(pair.store.committed["m"] == data)
}

@Test func severalFilesAndAStreamInOneSession() throws {
    let pair = Pair()
    let files: [any FileSource] = [
        MemoryFileSource(name: "a", bytes: bytes(10_000, seed: 1)),
        MemoryFileSource(name: "b", bytes: bytes(0, seed: 2)),
        MemoryFileSource(name: "c", bytes: bytes(70_000, seed: 3), asStream: true),
    ]
    var (sender, receiver) = pair.endpoints(files: files)
    let outcome = LoopbackRun.run(sender: &sender, receiver: &receiver, options: .init(maxDatagramSize: 182))
    #expect(outcome.finished)
    #expect(pair.store.committed["a"] == bytes(10_000, seed: 1))
    #expect(pair.store.committed["b"] == [])
    #expect(pair.store.committed["c"] == bytes(70_000, seed: 3))
}

/// Runs the sender's timers alone (nothing arrives) from `now` until it throws; returns the error and when.
private func silence(_ sender: inout SenderSession, from start: Instant) -> (SessionError?, Instant) {
    var now = start
    for _ in 0..<1000 {
        guard let next = sender.nextDeadline else { break }
        now = next
        do {
            try sender.handleTimers(now: now)
            while try sender.nextDatagram(now: now) != nil {}
        } catch {
            return (error, now)
        }
    }
    return (nil, now)
}

@Test func aPeerThatTakesMessage1AndNeverAnswersTimesOutTheHandshake() throws {
    let pair = Pair()
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "f", bytes: [1, 2, 3])])
    try sender.connect(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    try receiver.accept(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    // The sender's first message goes out; the receiver never answers. A silent impostor needs no
    // key for this: the sender gives up on it after the handshake timeout, not the idle timeout.
    while try sender.nextDatagram(now: .zero) != nil {}
    let (error, at) = silence(&sender, from: .zero)
    #expect(error == .handshakeTimeout)
    #expect(at == Instant.zero.advanced(by: SessionConfiguration().handshakeTimeout), "given up after \(at)")
    // The receiver, hearing nothing after its handshake timeout, gives up too.
    #expect(throws: SessionError.handshakeTimeout) { try receiver.handleTimers(now: Instant.zero.advanced(by: .seconds(10))) }
}

@Test func aPeerThatHoldsTheLinkButFallsSilentAfterTheHandshakeIsALostLink() throws {
    let pair = Pair()
    var (sender, receiver) = pair.endpoints(files: [MemoryFileSource(name: "f", bytes: bytes(200_000, seed: 4))])
    try sender.connect(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    try receiver.accept(maxDatagramSize: 244, now: .zero, wallClock: LoopbackRun.wallClockBase)
    // Message 1 and message 2 cross; from then on the receiver is never heard again.
    while let datagram = try sender.nextDatagram(now: .zero) { try receiver.receive(datagram: datagram, now: .zero) }
    while let datagram = receiver.nextDatagram(now: .zero) { try sender.receive(datagram: datagram, now: .zero) }
    #expect(sender.isEstablished)
    let (error, at) = silence(&sender, from: .zero)
    #expect(error == .linkLost)
    #expect(at <= Instant.zero.advanced(by: .seconds(31)), "given up after \(at)")
}
