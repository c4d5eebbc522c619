import BlueZ
import Foundation
import Keys
import Logging
import MemoryTransport
import Pipeline
import Session
import SessionRunner
import Sodium
import Durable
import Synchronization
import TestDoubles
import Testing
import Transfer
@testable import BlesendCLI

/// The send operation end to end over the transport seam: a `PeerConnector` that hands out
/// in-memory connections to a real receiver session, instead of BlueZ.
@Suite("Send operation over the connector seam", .timeLimit(.minutes(2)))
struct SendOperationTests {
    /// Hands a non-Sendable value to one task at a time (each receiver task awaits the previous one).
    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// Forwards to a transport and closes it after `cutAfter` sent datagrams: a link lost mid-file.
    final class CuttingTransport: DatagramTransport {
        let inner: MemoryTransport
        private let sent = Mutex(0)
        let cutAfter: Int?
        init(_ inner: MemoryTransport, cutAfter: Int?) { self.inner = inner; self.cutAfter = cutAfter }
        var maxDatagramSize: Int { inner.maxDatagramSize }
        func send(_ datagram: [UInt8]) async throws {
            let count = sent.withLock { $0 += 1; return $0 }
            if let cutAfter, count > cutAfter {
                await inner.close()
                throw TransportError.closed
            }
            try await inner.send(datagram)
        }
        func receive() async throws -> [UInt8] { try await inner.receive() }
        func close() async { await inner.close() }
    }

    /// Each `connect` is a fresh in-memory connection to the same receiver session; the first
    /// `cuts.count` connections are cut after so many datagrams; after `reachable` connections
    /// the receiver is gone (`notFound`).
    final class FakeConnector: PeerConnector {
        let receiver: Box<ReceiverSession>
        let clock = MonotonicClock()
        let cuts: [Int]
        let reachable: Int
        private let state = Mutex<(count: Int, last: Task<Void, Never>?)>((0, nil))
        init(receiver: Box<ReceiverSession>, cuts: [Int], reachable: Int = .max) {
            self.receiver = receiver
            self.cuts = cuts
            self.reachable = reachable
        }
        var connections: Int { state.withLock { $0.count } }

        func connect(scanTime: Duration, excluding: Set<String>, known: Set<String>,
                     progress: @escaping @Sendable (ConnectStep) -> Void) async throws(BlueZError) -> PeerConnection {
            let pair = MemoryTransportPair(maxDatagramSize: 244)
            let (index, previous) = state.withLock { s -> (Int, Task<Void, Never>?) in
                s.count += 1
                return (s.count, s.last)
            }
            guard index <= reachable else { throw .notFound }
            progress(.found(device: "/org/bluez/hci1/dev_FAKE"))
            let receiver = self.receiver, clock = self.clock, far = pair.second
            let task = Task {
                await previous?.value
                _ = try? await EndpointRunner.runReceiver(&receiver.value, over: far, clock: clock) { _ in }
                await far.close()
            }
            state.withLock { $0.last = task }
            let cut = index <= cuts.count ? cuts[index - 1] : nil
            return PeerConnection(transport: CuttingTransport(pair.first, cutAfter: cut), device: "/org/bluez/hci1/dev_FAKE")
        }

        func finish() async { await state.withLock { $0.last }?.value }
    }

    let senderID = Identity.generate()
    let receiverID = Identity.generate()
    let store = MemoryFileStore()

    func operation(_ sources: [any FileSource], connector: FakeConnector) -> SendOperation {
        SendOperation(
            identity: senderID, receiverKey: receiverID.publicKey, receiverName: "r", items: sources.map(OutgoingItem.file),
            radio: RadioOptions(scanTimeout: .seconds(2)), connector: connector,
            reporter: Reporter(options: .init(quiet: true, tool: "blesend"), logger: Logger(label: "test"), writeError: { _ in }))
    }

    func receiver() -> Box<ReceiverSession> {
        Box(ReceiverSession(identity: receiverID, trust: TrustStore(peers: [.init(name: "s", key: senderID.publicKey)]), store: store))
    }

    @Test func linksCutMidFileAreResumedAndTheFileArrivesIdentical() async throws {
        let data = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let connector = FakeConnector(receiver: receiver(), cuts: [200, 400])
        try await operation([MemoryFileSource(name: "big.bin", bytes: data)], connector: connector).run()
        await connector.finish()
        #expect(connector.connections == 3)
        #expect(store.committed["big.bin"] == data)
    }

    /// The history: one entry per file, synced as the receiver confirms it, saying it resumed,
    /// with the whole-file hash and what went on the air (the resends after two cuts included).
    @Test func aSentFileIsWrittenIntoTheHistory() async throws {
        let folder = "/tmp/blesend-history-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let data = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
        let connector = FakeConnector(receiver: receiver(), cuts: [200, 400])
        let reporter = Reporter(options: .init(quiet: true, tool: "blesend"), logger: Logger(label: "test"), writeError: { _ in })
        var operation = operation([MemoryFileSource(name: "big.bin", bytes: data)], connector: connector)
        operation.history = History(folder: folder, name: History.sentName, reporter: reporter)
        try await operation.run()
        await connector.finish()
        let entries = try HistoryJournal(disk: try PosixDisk(folder: folder), name: History.sentName).entries()
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        var hash = BLAKE2b(outputLength: 32)
        hash.update(data)
        #expect(entry.direction == .sent && entry.outcome == .saved && entry.resumed && entry.size == 300_000)
        #expect(entry.hash == hash.finalize() && entry.path == "big.bin" && entry.peer == "r")
        #expect(entry.fingerprint == receiverID.publicKey.fingerprint)
        #expect((entry.airBytes ?? 0) > 300_000, "two cuts resend something: \(String(describing: entry.airBytes))")
    }

    @Test func aReceiverGoneAfterALostLinkEndsWithLinkLost() async throws {
        let data = (0..<300_000).map { UInt8(truncatingIfNeeded: $0) }
        let connector = FakeConnector(receiver: receiver(), cuts: [200], reachable: 1)
        do {
            try await operation([MemoryFileSource(name: "big.bin", bytes: data)], connector: connector).run()
            Issue.record("the send succeeded without a receiver")
        } catch {
            #expect(error.status == .linkLost)
        }
        await connector.finish()
        #expect(store.committed["big.bin"] == nil)
    }
}
