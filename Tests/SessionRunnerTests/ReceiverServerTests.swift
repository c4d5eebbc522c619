import Admission
import Dispatch
import Keys
import MemoryTransport
import Pipeline
import Session
@testable import SessionRunner
import Synchronization
import TestDoubles
import Testing
import Transfer

/// A receiver server over in-memory pairs: several senders on one pump, admitted by the policy,
/// and strangers cut off by its deadlines while trusted senders are served.
private final class ServerBench: @unchecked Sendable {
    let receiverID = Identity.generate()
    let senders = [Identity.generate(), Identity.generate(), Identity.generate()]
    /// Shared by the pump and the connections' storage workers; `gate` may hold one commit.
    let gate = CommitGate()
    lazy var store = SharedMemoryStore { [gate] in gate.before($0) }
    let configuration = Peers().configuration
    let events = Mutex<[ReceiverServer.Event]>([])

    /// The receiver's first session: every channel's session shares its state.
    lazy var base: ReceiverSession = {
        let trust = TrustStore(peers: senders.enumerated().map { .init(name: "s\($0.offset)", key: $0.element.publicKey) })
        return ReceiverSession(identity: receiverID, trust: trust, store: store, configuration: configuration)
    }()

    /// Called on the server's thread only.
    func session() -> ReceiverSession { base.sharingState() }

    func sender(_ index: Int, _ files: [any FileSource]) -> Box<SenderSession> {
        Box(SenderSession(identity: senders[index], receiverKey: receiverID.publicKey, files: files, configuration: configuration))
    }

    /// Runs `server` until it is closed, recording its events.
    func run(_ server: ReceiverServer) -> Task<Void, Never> {
        Task { await server.run(makeSession: { self.session() }) { event in self.events.withLock { $0.append(event) } } }
    }

    var admissions: [AdmissionAction] {
        events.withLock { $0.compactMap { if case .admission(let action) = $0 { action } else { nil } } }
    }

    func ended(_ channel: ChannelID) -> (Result<ConnectionEnding, SessionError>, Bool)? {
        events.withLock { events in
            for case .ended(let id, let result, let authenticated) in events where id == channel { return (result, authenticated) }
            return nil
        }
    }

    /// Polls (real time) until `condition` holds or `seconds` pass.
    func wait(seconds: Double = 20, until condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}

/// Holds the sync `held` (a file's commit, a folder's commit), on its storage worker, until `open`.
private final class CommitGate: Sendable {
    let held = Mutex<SharedMemoryStore.Sync?>(nil)
    private let entered = Mutex(false)
    private let release = DispatchSemaphore(value: 0)

    func before(_ sync: SharedMemoryStore.Sync) {
        guard let held = held.withLock({ $0 }), sync == held else { return }
        entered.withLock { $0 = true }
        release.wait()
    }

    var hasEntered: Bool { entered.withLock { $0 } }
    func open() { release.signal() }
}

private func bytes(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* (seed | 1) &+ $0 >> 7 &+ seed) }
}

@Test(.timeLimit(.minutes(2)))
func twoSendersAreServedAtOnceOnOnePump() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let pairs = [MemoryTransportPair(maxDatagramSize: 244), MemoryTransportPair(maxDatagramSize: 182)]
    let data = [bytes(90_000, seed: 3), bytes(70_000, seed: 5)]
    var channels: [ChannelID] = []
    for (index, pair) in pairs.enumerated() {
        server.linkUp(DeviceID("dev\(index)"))
        channels.append(try #require(await server.open(pair.second, from: DeviceID("dev\(index)"))))
    }
    let first = bench.sender(0, [MemoryFileSource(name: "a", bytes: data[0])])
    let second = bench.sender(1, [MemoryFileSource(name: "b", bytes: data[1])])
    let sendingSecond = Task { try await EndpointRunner.runSender(&second.value, over: pairs[1].first) { _ in } }
    #expect(try await EndpointRunner.runSender(&first.value, over: pairs[0].first) { _ in } == .finished)
    #expect(try await sendingSecond.value == .finished)
    #expect(await bench.wait { channels.allSatisfy { bench.ended($0) != nil } })
    server.close()
    await running.value
    #expect(bench.store.committed["a"].map { $0 == data[0] } == true)
    #expect(bench.store.committed["b"].map { $0 == data[1] } == true)
    for channel in channels {
        #expect(bench.admissions.contains(.admit(channel)))
        let ended = try #require(bench.ended(channel))
        #expect((try? ended.0.get()) == .finished)
        #expect(ended.1)
    }
}

/// A channel that never speaks is closed at the policy's handshake deadline (counted from its
/// link), and its device backed off, while a trusted sender on another channel is served.
@Test(.timeLimit(.minutes(2)))
func aSilentChannelIsCutOffWhileATrustedSenderIsServed() async throws {
    let bench = ServerBench()
    // Long enough for the trusted sender's handshake on a loaded machine (`swift test --parallel`).
    let admission = AdmissionConfiguration(handshakeTimeout: .seconds(3))
    let server = try #require(ReceiverServer(admission: admission, clock: MonotonicClock()))
    let running = bench.run(server)
    let silent = MemoryTransportPair(), trusted = MemoryTransportPair()
    server.linkUp(DeviceID("stranger"))
    let silentChannel = try #require(await server.open(silent.second, from: DeviceID("stranger")))
    let trustedChannel = try #require(await server.open(trusted.second, from: DeviceID("friend")))
    let sender = bench.sender(0, [MemoryFileSource(name: "f", bytes: bytes(20_000, seed: 9))])
    #expect(try await EndpointRunner.runSender(&sender.value, over: trusted.first) { _ in } == .finished)
    #expect(await bench.wait { bench.ended(silentChannel) != nil && bench.ended(trustedChannel) != nil })
    #expect(bench.admissions.contains(.close(silentChannel, .handshakeTimeout)))
    #expect(bench.ended(silentChannel)?.1 == false)
    #expect(bench.ended(trustedChannel)?.1 == true)
    #expect(bench.store.committed["f"].map { $0 == bytes(20_000, seed: 9) } == true)
    // The stranger's device is backed off: its next channel is refused at once.
    let again = MemoryTransportPair()
    let refused = try #require(await server.open(again.second, from: DeviceID("stranger")))
    #expect(await bench.wait {
        bench.admissions.contains { if case .refuse(refused, .backoff) = $0 { true } else { false } }
    })
    server.close()
    await silent.first.close()
    await running.value
}

/// A link that opens no channel is disconnected after the bare-link timeout; the server reports
/// the action for its user to carry out.
@Test(.timeLimit(.minutes(1)))
func aBareLinkIsDisconnected() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(admission: AdmissionConfiguration(bareLinkTimeout: .milliseconds(200)),
                                             clock: MonotonicClock()))
    let running = bench.run(server)
    server.linkUp(DeviceID("tap"))
    #expect(await bench.wait { bench.admissions.contains(.disconnect(DeviceID("tap"), .bareLink)) })
    server.close()
    await running.value
}

/// At the cap, a stranger's silent channel is pre-empted by a new one, never a sender that
/// authenticated: the trusted transfer completes while strangers come and go.
@Test(.timeLimit(.minutes(2)))
func strangersPreemptEachOtherButNeverAnAuthenticatedSender() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(admission: AdmissionConfiguration(maxLinks: 2), clock: MonotonicClock()))
    let running = bench.run(server)
    let trusted = MemoryTransportPair(queueCapacity: 8)
    let trustedChannel = try #require(await server.open(trusted.second, from: DeviceID("friend")))
    let data = bytes(200_000, seed: 11)
    let sender = bench.sender(0, [MemoryFileSource(name: "big", bytes: data)])
    let sending = Task { try await EndpointRunner.runSender(&sender.value, over: trusted.first) { _ in } }
    #expect(await bench.wait { bench.events.withLock { $0.contains { if case .session(trustedChannel, .authenticated) = $0 { true } else { false } } } })
    var strangers: [(MemoryTransportPair, ChannelID)] = []
    for index in 0..<4 {
        let pair = MemoryTransportPair()
        strangers.append((pair, try #require(await server.open(pair.second, from: DeviceID("stranger\(index)")))))
    }
    #expect(try await sending.value == .finished)
    #expect(bench.store.committed["big"].map { $0 == data } == true)
    #expect(await bench.wait { strangers.dropLast().allSatisfy { bench.ended($0.1) != nil } })
    for (_, channel) in strangers.dropLast() { #expect(bench.admissions.contains(.close(channel, .preempted))) }
    #expect(!bench.admissions.contains { if case .close(trustedChannel, _) = $0 { true } else { false } })
    server.close()
    for (pair, _) in strangers { await pair.first.close() }
    await running.value
}

/// One of two senders loses its link mid-transfer: its channel ends as lost, the other completes.
@Test(.timeLimit(.minutes(2)))
func aCutLinkEndsOnlyItsOwnChannel() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let cut = MemoryTransportPair(queueCapacity: 4), whole = MemoryTransportPair()
    let cutChannel = try #require(await server.open(cut.second, from: DeviceID("a")))
    let wholeChannel = try #require(await server.open(whole.second, from: DeviceID("b")))
    let data = bytes(120_000, seed: 13)
    let doomed = bench.sender(0, [MemoryFileSource(name: "cut", bytes: bytes(400_000, seed: 1))])
    let fine = bench.sender(1, [MemoryFileSource(name: "whole", bytes: data)])
    let doomedRun = Task { try await EndpointRunner.runSender(&doomed.value, over: cut.first) { _ in } }
    let fineRun = Task { try await EndpointRunner.runSender(&fine.value, over: whole.first) { _ in } }
    #expect(await bench.wait {
        bench.events.withLock { $0.contains { if case .session(cutChannel, .transfer(.progress)) = $0 { true } else { false } } }
    })
    await cut.second.close()
    await cut.first.close()
    _ = try? await doomedRun.value
    #expect(try await fineRun.value == .finished)
    #expect(await bench.wait { bench.ended(cutChannel) != nil && bench.ended(wholeChannel) != nil })
    #expect(bench.store.committed["whole"].map { $0 == data } == true)
    #expect(bench.store.committed["cut"] == nil)
    #expect((try? bench.ended(cutChannel)?.0.get()) == .linkLost)
    server.close()
    await running.value
}

/// `shutDown` ends every connection at once (as lost links) and `run` returns, where `close`
/// would wait for them.
@Test(.timeLimit(.minutes(1)))
func shutDownEndsEveryConnectionNow() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let silent = MemoryTransportPair()
    let channel = try #require(await server.open(silent.second, from: DeviceID("a")))
    #expect(await bench.wait { bench.admissions.contains(.admit(channel)) })
    server.shutDown()
    await running.value
    #expect((try? bench.ended(channel)?.0.get()) == .linkLost)
    await silent.first.close()
}

/// A sender whose link is cut resumes on a new channel of the same server: the channels'
/// sessions share the receiver's partials (and its replay guard: the second handshake is new).
@Test(.timeLimit(.minutes(2)))
func aCutSenderResumesOnANewChannel() async throws {
    let bench = ServerBench()
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let data = bytes(300_000, seed: 17)
    let sender = bench.sender(0, [MemoryFileSource(name: "big", bytes: data)])
    let first = MemoryTransportPair(maxDatagramSize: 244)
    let firstChannel = try #require(await server.open(first.second, from: DeviceID("a")))
    let cut = Box(false)
    let firstEnding = try await EndpointRunner.runSender(&sender.value, over: first.first) { event in
        if case .transfer(.progress(_, _, let acked)) = event, acked >= 60_000, !cut.value {
            cut.value = true
            Task { await first.first.close() }
        }
    }
    #expect(firstEnding == .linkLost)
    await first.second.close()
    #expect(await bench.wait { bench.ended(firstChannel) != nil })
    let second = MemoryTransportPair(maxDatagramSize: 244)
    let secondChannel = try #require(await server.open(second.second, from: DeviceID("a")))
    let resumedAt = Box<UInt64>(0)
    #expect(try await EndpointRunner.runSender(&sender.value, over: second.first) { event in
        if case .transfer(.fileStarted(_, _, _, let at)) = event { resumedAt.value = at }
    } == .finished)
    #expect(await bench.wait { bench.ended(secondChannel) != nil })
    #expect(resumedAt.value >= 60_000)
    #expect(bench.store.committed["big"].map { $0 == data } == true)
    server.close()
    await running.value
}

/// Issue 32: a file's commit runs on its connection's storage worker, off the pump. Here it is
/// held: its sender's link is cut meanwhile, and the pump goes on serving another sender (it
/// never waits for a worker); the cut connection's end is told only once the commit is in. The
/// sender, back on a new channel before that, re-offers the file: it is answered as completed,
/// and its `done` is confirmed with the real outcome once the commit is in. Stored once.
@Test(.timeLimit(.minutes(2)))
func aCommitHeldOnItsWorkerStopsNobodyAndItsResumeGetsItsOutcome() async throws {
    let bench = ServerBench()
    bench.gate.held.withLock { $0 = .fileCommit("a") }
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let data = bytes(5_000, seed: 3)
    let sender = bench.sender(0, [MemoryFileSource(name: "a", bytes: data)])
    let first = MemoryTransportPair()
    let firstChannel = try #require(await server.open(first.second, from: DeviceID("a")))
    let firstRun = Task { try await EndpointRunner.runSender(&sender.value, over: first.first) { _ in } }
    #expect(await bench.wait { bench.gate.hasEntered })
    await first.first.close()
    await first.second.close()
    #expect(try await firstRun.value == .linkLost)
    // Another sender is served from start to end while the commit is held.
    let other = MemoryTransportPair()
    let otherChannel = try #require(await server.open(other.second, from: DeviceID("b")))
    let otherData = bytes(40_000, seed: 5)
    let otherSender = bench.sender(1, [MemoryFileSource(name: "b", bytes: otherData)])
    #expect(try await EndpointRunner.runSender(&otherSender.value, over: other.first) { _ in } == .finished)
    #expect(await bench.wait { bench.ended(otherChannel) != nil })
    #expect(bench.ended(firstChannel) == nil, "its end waits for the commit")
    // The sender is back: "a" is offered again and answered as completed; its done waits.
    let second = MemoryTransportPair()
    let secondChannel = try #require(await server.open(second.second, from: DeviceID("a")))
    let resumedAt = Box<UInt64?>(nil)
    let secondRun = Task {
        try await EndpointRunner.runSender(&sender.value, over: second.first) { event in
            if case .transfer(.fileStarted(_, _, _, let at)) = event { resumedAt.value = at }
        }
    }
    try await Task.sleep(for: .milliseconds(300))
    #expect(bench.ended(secondChannel) == nil)
    bench.gate.open()
    #expect(try await secondRun.value == .finished)
    #expect(resumedAt.value == UInt64(data.count))
    #expect(await bench.wait { bench.ended(firstChannel) != nil && bench.ended(secondChannel) != nil })
    #expect(bench.store.committed == ["a": data, "b": otherData])
    server.close()
    await running.value
}

/// Issue 32: a sent folder's commit is held on its connection's worker and the link is cut; the
/// sender comes back and sends the commit again as its opening: message 2 waits for the held
/// commit's outcome and carries its `confirm`. The folder is placed once.
@Test(.timeLimit(.minutes(2)))
func aFolderCommitHeldOnItsWorkerAnswersTheResumedOpeningOnceItIsIn() async throws {
    let bench = ServerBench()
    bench.gate.held.withLock { $0 = .folderCommit }
    let server = try #require(ReceiverServer(clock: MonotonicClock()))
    let running = bench.run(server)
    let tree = randomTransferID()
    let files = (0..<3).map { bytes(3_000, seed: $0) }
    let items: [OutgoingItem] = [.folder(tree: tree, path: Array("album".utf8))]
        + files.enumerated().map { .treeFile(tree: tree, path: Array("album/f\($0.offset)".utf8), executable: false,
                                             source: MemoryFileSource(name: "album/f\($0.offset)", bytes: $0.element)) }
        + [.commit(tree: tree, name: "album")]
    let sender = Box(SenderSession(identity: bench.senders[0], receiverKey: bench.receiverID.publicKey, items: items,
                                   configuration: bench.configuration))
    let extensions = bench.base.extensions
    let first = MemoryTransportPair()
    let firstChannel = try #require(await server.open(first.second, from: DeviceID("a")))
    let firstRun = Task { try await EndpointRunner.runSender(&sender.value, over: first.first, receiverExtensions: extensions) { _ in } }
    #expect(await bench.wait { bench.gate.hasEntered })
    await first.first.close()
    await first.second.close()
    #expect(try await firstRun.value == .linkLost)
    let second = MemoryTransportPair()
    let secondChannel = try #require(await server.open(second.second, from: DeviceID("a")))
    let secondRun = Task { try await EndpointRunner.runSender(&sender.value, over: second.first, receiverExtensions: extensions) { _ in } }
    try await Task.sleep(for: .milliseconds(300))
    #expect(bench.ended(firstChannel) == nil && bench.ended(secondChannel) == nil)
    bench.gate.open()
    #expect(try await secondRun.value == .finished)
    #expect(await bench.wait { bench.ended(firstChannel) != nil && bench.ended(secondChannel) != nil })
    #expect(bench.store.committed == ["album/f0": files[0], "album/f1": files[1], "album/f2": files[2]])
    server.close()
    await running.value
}
