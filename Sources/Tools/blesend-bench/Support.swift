#if canImport(Glibc)
import Glibc
#endif
import Keys
import MemoryTransport
import Pipeline
import Session
import Simulation
import Transfer

// MARK: - Link sizes

/// The datagram a sender writes at ATT MTU `mtu`: `min(mtu - 3, 510)`, BlueZ 5.66 taking at most
/// 510 bytes per value. The same as the BlueZ module's `attPayloadSize(mtu:)`; the bench runs no
/// BlueZ, so it keeps this copy rather than depend on that module.
func writeDatagramSize(mtu: Int) -> Int {
    max(0, min(mtu - 3, 510))
}

// MARK: - Output

/// `x` with `digits` decimals (no Foundation in this binary: it would inflate the RSS baseline).
func fixed(_ x: Double, _ digits: Int = 2) -> String {
    guard x.isFinite else { return "\(x)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(x) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = "\(whole)"
    if digits > 0 {
        let f = "\(fraction)"
        text += "." + String(repeating: "0", count: max(0, digits - f.count)) + f
    }
    return (x < 0 && scaled != 0 ? "-" : "") + text
}

func padded(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

func leftPadded(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}

func seconds(_ d: Duration) -> Double {
    let (s, atto) = d.components
    return Double(s) + Double(atto) / 1e18
}

func milliseconds(_ d: Duration) -> String { fixed(seconds(d) * 1000, 1) + " ms" }

func verdict(_ pass: Bool) -> String { pass ? "PASS" : "FAIL" }

func mib(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) + " MiB" }

/// Progress and diagnostics go to stderr so stdout holds only the figures.
func note(_ text: String) {
    var line = Array((text + "\n").utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

/// Flushes stdout (all C streams) before a child process writes to the same descriptor.
func flushOutput() { fflush(nil) }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func median(_ values: [Duration]) -> Duration {
    let sorted = values.sorted()
    if sorted.count % 2 == 1 { return sorted[sorted.count / 2] }
    return (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

// MARK: - Process memory

/// A `kB` field of /proc/self/status (`VmHWM`, `VmRSS`), in bytes.
func procStatusBytes(_ field: String) -> Int? {
    guard let file = fopen("/proc/self/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix(field + ":") else { continue }
        let digits = text.dropFirst(field.count + 1).filter { $0.isNumber }
        return Int(String(digits)).map { $0 * 1024 }
    }
    return nil
}

// MARK: - Endpoints

/// A sender and a receiver with fresh keys, the receiver trusting the sender.
func makeEndpoints(files: [any FileSource], store: any FileStore) -> (SenderSession, ReceiverSession) {
    makeEndpoints(items: files.map(OutgoingItem.file), store: store)
}

/// The same for any items (files, folders).
func makeEndpoints(items: [OutgoingItem], store: any FileStore) -> (SenderSession, ReceiverSession) {
    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    let trust = TrustStore(peers: [.init(name: "bench", key: senderID.publicKey)])
    let sender = SenderSession(identity: senderID, receiverKey: receiverID.publicKey, items: items)
    let receiver = ReceiverSession(identity: receiverID, trust: trust, store: store)
    return (sender, receiver)
}

/// A store that keeps nothing: it counts bytes and notes the commit, like a disk write whose cost
/// is not the stack's. Integrity is still checked: the receiver commits only after the whole-file
/// BLAKE2b matches.
final class CountingFileStore: FileStore {
    private(set) var bytesWritten: UInt64 = 0
    private(set) var committedNames: [String] = []

    func begin(name: String, size: UInt64?, sender: String) throws -> any IncomingFile {
        CountingIncomingFile(store: self, name: name)
    }

    fileprivate func add(_ count: Int) { bytesWritten += UInt64(count) }
    fileprivate func commit(_ name: String) { committedNames.append(name) }
}

private final class CountingIncomingFile: IncomingFile {
    let store: CountingFileStore
    let name: String
    init(store: CountingFileStore, name: String) {
        self.store = store
        self.name = name
    }
    func write(_ bytes: [UInt8], at offset: UInt64) throws { store.add(bytes.count) }
    func commit() throws -> String {
        store.commit(name)
        return name
    }
    func discard() {}
}

/// Wraps a source and reports to stderr each time reading crosses a multiple of `every` bytes.
final class ProgressFileSource: FileSource {
    private let inner: any FileSource
    private let every: UInt64
    private let label: String
    private var nextMark: UInt64
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    init(_ inner: any FileSource, every: UInt64, label: String) {
        self.inner = inner
        self.every = every
        self.label = label
        self.nextMark = every
        self.started = clock.now
    }

    var name: String { inner.name }
    var size: UInt64? { inner.size }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        let bytes = try inner.read(at: offset, count: count)
        let end = offset + UInt64(bytes.count)
        while end >= nextMark {
            let rss = procStatusBytes("VmRSS") ?? 0
            note("  [\(label)] \(nextMark >> 20) MiB read, \(fixed(seconds(clock.now - started), 1)) s, RSS \(mib(rss))")
            nextMark += every
        }
        return bytes
    }

    func release(before offset: UInt64) { inner.release(before: offset) }
}

// MARK: - Direct hand-off loop

struct HandOffResult {
    var finished = false
    var virtualTime: Duration = .zero
    var bytesFromSender = 0
    var bytesFromReceiver = 0
    var savedFiles = 0
    var failures: [String] = []
}

enum HandOffFailure: Error {
    case stuck(String)
    case session(String)
}

/// Sender and receiver wired back to back on a perfect virtual network: every datagram one side
/// produces is handed straight to the other, with zero latency and no loss. The virtual clock
/// only moves when neither side has anything to send (ack delay at the end of a burst).
/// Events are drained and dropped as we go, so memory stays flat.
func runHandOff(sender: inout SenderSession, receiver: inout ReceiverSession, datagramSize: Int) throws -> HandOffResult {
    var result = HandOffResult()
    do {
        try sender.connect(maxDatagramSize: datagramSize, now: .zero, wallClock: 1_763_000_000_000_000_000)
        try receiver.accept(maxDatagramSize: datagramSize, now: .zero, wallClock: 1_763_000_000_000_000_000)
    } catch {
        throw HandOffFailure.session("connect: \(error)")
    }
    var network = VirtualNetwork.perfect()
    var rounds = 0
    let ending: VirtualNetwork.Ending
    do {
        ending = try network.run(&sender, &receiver) { sender, receiver in
            rounds += 1
            if rounds & 63 == 0 { drainEvents(&sender, &receiver, into: &result) }
            return sender.isFinished && (receiver.connectionComplete || !receiver.isConnected)
        }
    } catch {
        throw HandOffFailure.session("\(error)")
    }
    guard ending == .done else { throw HandOffFailure.stuck("nothing to send and no timer pending") }
    drainEvents(&sender, &receiver, into: &result)
    result.finished = true
    result.bytesFromSender = network.bytesSent(from: .a)
    result.bytesFromReceiver = network.bytesSent(from: .b)
    result.virtualTime = network.now.duration(since: .zero)
    return result
}

private func drainEvents(_ sender: inout SenderSession, _ receiver: inout ReceiverSession, into result: inout HandOffResult) {
    for event in sender.takeEvents() {
        switch event {
        case .transfer(.fileSaved): result.savedFiles += 1
        case .transfer(.fileFailed(_, let failure)): result.failures.append("\(failure)")
        default: break
        }
    }
    for event in receiver.takeEvents() {
        if case .transfer(.fileFailed(_, _, let failure)) = event { result.failures.append("\(failure)") }
    }
}
