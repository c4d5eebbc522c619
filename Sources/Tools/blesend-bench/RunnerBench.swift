#if canImport(Glibc)
import Glibc
#endif
import Keys
import MemoryTransport
import Pipeline
import Session
import SessionRunner
import Sodium
import TestDoubles
import Transfer

/// The real-time pump's own cost (its async port): the same transfer through `EndpointRunner` over an in-memory
/// transport pair (the code path the tools run over BlueZ sockets), in CPU time per datagram,
/// next to the synchronous pipeline on the same bytes.
enum RunnerBench {
    final class Box<T>: @unchecked Sendable {
        var value: T
        init(_ value: T) { self.value = value }
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func run(mib: Int, mtu: Int) async {
        let datagram = writeDatagramSize(mtu: mtu)
        let bytes = Random.bytes(mib << 20)
        let senderID = Identity.generate(), receiverID = Identity.generate()
        let store = Box(MemoryFileStore(keepsBytes: true))
        var sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey,
                                   files: [MemoryFileSource(name: "r.bin", bytes: bytes)])
        let receiver = Box(ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "s", key: senderID.publicKey)]),
                                           store: store.value))
        let pair = MemoryTransportPair(maxDatagramSize: datagram, queueCapacity: 512)
        let cpu0 = cpuSeconds(), wall0 = ContinuousClock.now
        let receiving = Task { try await EndpointRunner.runReceiver(&receiver.value, over: pair.second, clock: MonotonicClock()) { _ in } }
        let ending = try? await EndpointRunner.runSender(&sender, over: pair.first) { _ in }
        await pair.first.close()
        _ = try? await receiving.value
        let cpu = cpuSeconds() - cpu0, wall = (ContinuousClock.now - wall0).seconds
        let frames = (sender.linkStatistics?.datagramsSent ?? 0)
        let ok = store.value.committed["r.bin"] == bytes
        let pipeline = CPUBench.pipeline(source: MemoryFileSource(name: "cpu.bin", bytes: bytes), datagramSize: datagram)
        print("runner \(mib) MiB MTU \(mtu): \(ending.map { "\($0)" } ?? "failed"), intact \(ok); CPU \(String(format2(cpu))) s, wall \(String(format2(wall))) s; \(frames) sender datagrams")
        print("   CPU per sender datagram (both sides, async path): \(String(format2(cpu / Double(max(frames, 1)) * 1e6))) µs")
        print("   synchronous pipeline on the same bytes: \(milliseconds(pipeline)) → async path costs \(String(format2(cpu / (pipeline).seconds)))× the pipeline")
    }

    static func format2(_ x: Double) -> String {
        let h = Int((x * 100).rounded())
        return "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)"
    }
}
