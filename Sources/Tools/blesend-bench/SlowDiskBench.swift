#if canImport(Glibc)
import Glibc
#endif
import Admission
import Keys
import MemoryTransport
import Pipeline
import Session
import SessionRunner
import Sodium
import Synchronization
import TestDoubles
import Transfer

/// Issue 32's benchmark: one receiver serving two senders on its one pump, on a disk whose every
/// sync takes `syncDelay` (a store in memory that sleeps where the real one calls fsync: a file's
/// commit and checkpoint, a folder made, a folder's commit). Each sender has a link of its own,
/// paced at `linkRate` like a radio (in memory alone the two would share this machine's CPU, and
/// B would lose a third of its goodput with no disk at all). Sender A sends a folder of many small
/// files; sender B, meanwhile, one file. B's goodput beside A, over B's goodput alone (same
/// process, one run after the other), is the figure: the goal is ≥ 0.9 (one sender's syncs never
/// delay another's datagrams). `blesend-bench slowdisk [files] [sync ms] [B's KiB]`.
enum SlowDiskBench {
    /// Each sender's link, in bytes a second (the lab's L2CAP moved ~375 kB/s, its GATT less).
    static let linkRate = 100 << 10

    static func run(files: Int, syncDelay: Duration, kib: Int) async -> Bool {
        let bytes = Random.bytes(kib << 10)
        print("slowdisk: A sends a folder of \(files) files of 100 bytes, B one file of \(kib) KiB, each on a link of \(linkRate >> 10) KiB/s; every sync takes \(milliseconds(syncDelay))")
        guard case .success(let alone) = await secondsForB(bytes, beside: nil, syncDelay: syncDelay) else {
            print("   B alone failed: no baseline")
            return false
        }
        print("   B alone \(RunnerBench.format2(alone)) s (\(RunnerBench.format2(Double(bytes.count) / alone / 1024)) KiB/s)")
        switch await secondsForB(bytes, beside: files, syncDelay: syncDelay) {
        case .failure(let failure):
            print("   B beside A failed: \(failure.why): goodput 0, over alone 0.00 (goal ≥ 0.90): \(verdict(false))")
            return false
        case .success(let beside):
            let ratio = alone / beside
            print("   B beside A \(RunnerBench.format2(beside)) s (\(RunnerBench.format2(Double(bytes.count) / beside / 1024)) KiB/s)")
            print("   B's goodput beside A / alone: \(RunnerBench.format2(ratio)) (goal ≥ 0.90): \(verdict(ratio >= 0.9))")
            return ratio >= 0.9
        }
    }

    struct Failure: Error {
        let why: String
    }

    /// Seconds B takes to send `bytes`, with A sending a folder of `files` files meanwhile (nil:
    /// alone), or why B failed.
    private static func secondsForB(_ bytes: [UInt8], beside files: Int?, syncDelay: Duration) async -> Result<Double, Failure> {
        let receiverID = Identity.generate(), a = Identity.generate(), b = Identity.generate()
        let disk = SlowSyncs(syncDelay: syncDelay)
        let store = SharedMemoryStore { _ in disk.sync() }
        let trust = TrustStore(peers: [.init(name: "a", key: a.publicKey), .init(name: "b", key: b.publicKey)])
        let base = RunnerBench.Box(ReceiverSession(identity: receiverID, trust: trust, store: store))
        guard let server = ReceiverServer(admission: AdmissionConfiguration(maxLinks: 3), clock: MonotonicClock()) else {
            return .failure(Failure(why: "no descriptor for the server"))
        }
        let serving = Task { await server.run(makeSession: { base.value.sharingState() }) { _ in } }
        defer { server.close() }
        var aSending: Task<String?, Never>?
        if let files {
            let tree = randomTransferID()
            var items: [OutgoingItem] = [.folder(tree: tree, path: Array("album".utf8))]
            for n in 0..<files {
                let path = "album/f\(n)"
                items.append(.treeFile(tree: tree, path: Array(path.utf8), executable: false,
                                       source: MemoryFileSource(name: path, bytes: Random.bytes(100))))
            }
            items.append(.commit(tree: tree, name: "album"))
            let sender = RunnerBench.Box(SenderSession(identity: a, receiverKey: receiverID.publicKey, items: items))
            guard let task = await send(sender, to: server, device: "A", extensions: base.value.extensions) else {
                return .failure(Failure(why: "A's channel did not open"))
            }
            aSending = task
            // A is under way (its folder made, files flowing) before B starts.
            try? await Task.sleep(for: syncDelay * 3)
        }
        let started = ContinuousClock.now
        let bSender = RunnerBench.Box(SenderSession(identity: b, receiverKey: receiverID.publicKey,
                                                    files: [MemoryFileSource(name: "b.bin", bytes: bytes)]))
        guard let bTask = await send(bSender, to: server, device: "B", extensions: base.value.extensions) else {
            return .failure(Failure(why: "B's channel did not open"))
        }
        let syncsBefore = disk.syncs.withLock { $0 }
        let bDone = await bTask.value
        let seconds = (ContinuousClock.now - started).seconds
        let syncsDuring = disk.syncs.withLock { $0 } - syncsBefore
        // A need not finish (1,000 syncs of 200 ms take minutes): B's time is the figure; the
        // disk turns fast so that the pump gets through what A has queued and stops.
        disk.slow.withLock { $0 = false }
        server.close()
        await serving.value
        _ = await aSending?.value
        if files != nil { print("   while B sent, the receiver synced \(syncsDuring) times (A's files, and B's own)") }
        if let why = bDone { return .failure(Failure(why: why)) }
        guard store.committed["b.bin"] == bytes else { return .failure(Failure(why: "b.bin arrived damaged")) }
        return .success(seconds)
    }

    /// Opens a channel for `sender` on `server` and sends; the task says why it did not finish (nil: it did).
    private static func send(_ sender: RunnerBench.Box<SenderSession>, to server: ReceiverServer, device: String,
                             extensions: TransferExtensions) async -> Task<String?, Never>? {
        let pair = MemoryTransportPair(maxDatagramSize: 244, queueCapacity: 512)
        server.linkUp(DeviceID(device))
        guard await server.open(pair.second, as: server.newChannel(), from: DeviceID(device)) else { return nil }
        return Task {
            defer { Task { await pair.first.close() } }
            do {
                let ending = try await EndpointRunner.runSender(&sender.value, over: PacedTransport(pair.first, bytesPerSecond: linkRate),
                                                                 receiverExtensions: extensions) { _ in }
                return ending == .finished ? nil : "\(ending)"
            } catch {
                return "\(error)"
            }
        }
    }
}

/// A disk whose syncs are slow: each place where the real store syncs sleeps `syncDelay` first,
/// on the calling thread (a connection's storage worker, or the pump's for what still syncs
/// there), in front of a `SharedMemoryStore`.
final class SlowSyncs: Sendable {
    let syncDelay: Duration
    /// Syncs so far.
    let syncs = Mutex(0)
    /// Whether syncs take `syncDelay` (else none).
    let slow = Mutex(true)

    init(syncDelay: Duration) { self.syncDelay = syncDelay }

    func sync() {
        syncs.withLock { $0 += 1 }
        guard slow.withLock({ $0 }) else { return }
        let (seconds, attoseconds) = syncDelay.components
        var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000)), left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
    }
}

/// A transport whose sends are paced to `bytesPerSecond`, as a radio link's would be.
private final class PacedTransport: DatagramTransport, @unchecked Sendable {
    private let inner: any DatagramTransport
    private let bytesPerSecond: Int
    /// When the link is free again (used only by the sending task).
    private var free = ContinuousClock.now

    init(_ inner: any DatagramTransport, bytesPerSecond: Int) {
        self.inner = inner
        self.bytesPerSecond = bytesPerSecond
    }

    var maxDatagramSize: Int { inner.maxDatagramSize }
    var peerMaxDatagramSize: Int { inner.peerMaxDatagramSize }

    func send(_ datagram: [UInt8]) async throws {
        free = max(free, ContinuousClock.now) + .seconds(Double(datagram.count) / Double(bytesPerSecond))
        try? await Task.sleep(until: free, clock: .continuous)
        try await inner.send(datagram)
    }

    func send(contentsOf datagrams: [[UInt8]]) async throws {
        for datagram in datagrams { try await send(datagram) }
    }

    func receive() async throws -> [UInt8] { try await inner.receive() }
    func receiveAvailable() async throws -> [[UInt8]] { try await inner.receiveAvailable() }
    func close() async { await inner.close() }
}
