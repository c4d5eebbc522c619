#if canImport(Glibc)
import Glibc
#endif
import Keys
import Pipeline
import Session
import SessionRunner
import SocketIO
import Sodium
import TestDoubles
import Transfer

/// What a datagram costs blesend on the socket path the tools run over GATT, natively, with no
/// bluetoothd in between: a whole transfer (sender and receiver sessions, each driven by
/// `EndpointRunner`'s real-time pump with a socket port, on its own thread) over AF_UNIX SOCK_SEQPACKET socket pairs,
/// one per direction, like the sockets bluetoothd hands over for `AcquireWrite`/`AcquireNotify`.
/// Beside it, in the same run, a raw stream of the same number of datagrams of the same size over
/// the same kind of socket pair, one blocking writer thread and one blocking reader thread: what
/// the lab's raw GATT baseline does at its ends. Reports CPU time per datagram for both (user +
/// system, the whole process) and their ratio: the part of the lab's GATT cost that is ours.
/// Repeats both `rounds` times interleaved and reports medians. Run it under `perf record` to see
/// where our part goes.
enum SocketBench {
    static let rounds = 3

    static func run(mib: Int, datagramSize: Int) async {
        print("== sockets: \(mib) MiB, \(datagramSize)-byte datagrams over AF_UNIX SOCK_SEQPACKET pairs (no bluetoothd)")
        let bytes = Random.bytes(mib << 20)
        var ours: [(cpu: Double, wall: Double, datagrams: Int)] = []
        var raw: [(cpu: Double, wall: Double)] = []
        for round in 1...rounds {
            guard let o = await blesend(bytes, datagramSize: datagramSize) else {
                print("blesend transfer failed or arrived damaged")
                return
            }
            ours.append(o)
            let r = await rawStream(datagrams: o.datagrams, size: datagramSize)
            raw.append(r)
            note("  [sockets] round \(round): blesend \(fixed(o.cpu, 3)) s CPU / \(fixed(o.wall, 3)) s wall (\(o.datagrams) datagrams);"
                 + " raw \(fixed(r.cpu, 3)) s CPU / \(fixed(r.wall, 3)) s wall")
        }
        let datagrams = Double(ours[0].datagrams)
        let oursCPU = median(ours.map(\.cpu)), rawCPU = median(raw.map(\.cpu))
        let oursWall = median(ours.map(\.wall)), rawWall = median(raw.map(\.wall))
        print("blesend: \(ours[0].datagrams) datagrams; CPU median \(fixed(oursCPU, 3)) s = \(fixed(oursCPU / datagrams * 1e6, 2)) µs per datagram;"
              + " wall \(fixed(oursWall, 3)) s (\(fixed(Double(bytes.count) / 1_048_576 / oursWall, 1)) MiB/s)")
        print("raw:     same datagrams; CPU median \(fixed(rawCPU, 3)) s = \(fixed(rawCPU / datagrams * 1e6, 2)) µs per datagram;"
              + " wall \(fixed(rawWall, 3)) s")
        print("   CPU ratio blesend/raw \(fixed(oursCPU / rawCPU, 2))   (lower is better; both ends of the link in one process)")
        flushOutput()
    }

    /// One transfer of `bytes`; nil if it failed or arrived different.
    static func blesend(_ bytes: [UInt8], datagramSize: Int) async -> (cpu: Double, wall: Double, datagrams: Int)? {
        guard let (a, b) = try? SocketPairTransport.pair(maxDatagramSize: datagramSize) else { return nil }
        let senderID = Identity.generate(), receiverID = Identity.generate()
        let store = RunnerBench.Box(MemoryFileStore(keepsBytes: true))
        var sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                                   files: [MemoryFileSource(name: "s.bin", bytes: bytes)])
        let receiver = RunnerBench.Box(ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "s", key: senderID.publicKey)]),
                                                       store: store.value))
        let cpu0 = RunnerBench.cpuSeconds(), wall0 = ContinuousClock.now
        let receiving = Task { try await EndpointRunner.runReceiver(&receiver.value, over: b, clock: MonotonicClock()) { _ in } }
        let ending = try? await EndpointRunner.runSender(&sender, over: a) { _ in }
        await a.close()
        _ = try? await receiving.value
        await b.close()
        let cpu = RunnerBench.cpuSeconds() - cpu0, wall = (ContinuousClock.now - wall0).seconds
        guard ending != nil, store.value.committed["s.bin"] == bytes else { return nil }
        return (cpu, wall, sender.linkStatistics?.datagramsSent ?? 0)
    }

    /// `datagrams` datagrams of `size` bytes from a blocking writer to a blocking reader.
    static func rawStream(datagrams: Int, size: Int) async -> (cpu: Double, wall: Double) {
        guard let (w, r) = try? socketPair() else { return (0, 0) }
        let cpu0 = RunnerBench.cpuSeconds(), wall0 = ContinuousClock.now
        let reader = Task.detached {
            var buffer = [UInt8](repeating: 0, count: size + 1)
            var got = 0
            while got < datagrams {
                let n = buffer.withUnsafeMutableBytes { recv(r, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                got += 1
            }
            return got
        }
        let writer = Task.detached {
            var payload = [UInt8](repeating: 0, count: size)
            payload.withUnsafeMutableBytes { Random.fill($0) }
            for _ in 0..<datagrams {
                let n = payload.withUnsafeBytes { send(w, $0.baseAddress, $0.count, 0) }
                if n != size { break }
            }
        }
        await writer.value
        _ = await reader.value
        let cpu = RunnerBench.cpuSeconds() - cpu0, wall = (ContinuousClock.now - wall0).seconds
        close(w)
        close(r)
        return (cpu, wall)
    }
}
