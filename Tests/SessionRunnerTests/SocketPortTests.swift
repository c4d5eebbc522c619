import Framing
import Glibc
import Pipeline
import Session
import SessionRunner
import SocketIO
import Synchronization
import TestDoubles
import Testing
import Transfer

/// `EndpointRunner` over transports that hand over their sockets: the real-time pump's socket port
/// on a thread of its own, over real AF_UNIX SOCK_SEQPACKET socket pairs, with real sessions.
@Suite("Socket port", .timeLimit(.minutes(2)))
struct SocketPortTests {
    func bytes(_ count: Int, _ seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* seed &+ $0 >> 9) }
    }

    func receive(_ receiver: Box<ReceiverSession>, over transport: some DatagramTransport,
                 clock: some EndpointClock = MonotonicClock()) -> Task<EndpointRunner.Ending, any Error> {
        Task { try await EndpointRunner.runReceiver(&receiver.value, over: transport, clock: clock) { _ in } }
    }

    @Test func severalFilesCrossTheLoop() async throws {
        let peers = Peers()
        let files = [bytes(300_000, 13), [], bytes(4_097, 7), bytes(90_001, 3)]
        var sender = peers.sender(files.enumerated().map { MemoryFileSource(name: "f\($0.offset)", bytes: $0.element) })
        let receiver = peers.receiver()
        let (a, b) = try SocketPairTransport.pair(maxDatagramSize: 510)
        let receiving = receive(receiver, over: b)
        var saved: [Int] = []
        let sent = try await EndpointRunner.runSender(&sender, over: a) { event in
            if case .transfer(.fileSaved(let index, _, _, _, _)) = event { saved.append(index) }
        }
        await a.close()
        let received = try await receiving.value
        await b.close()
        #expect(sent == .finished)
        #expect(received == .finished)
        #expect(saved == [0, 1, 2, 3])
        for (i, file) in files.enumerated() { #expect(peers.store.value.committed["f\(i)"] == file, "file \(i)") }
    }

    /// A send buffer far smaller than the window: the loop waits for room instead of dropping, so
    /// nothing is ever sent twice (the RTO is far beyond the test's length).
    @Test func aFullSocketHoldsDatagramsBackAndLosesNothing() async throws {
        var peers = Peers()
        peers.configuration = SessionConfiguration(
            link: LinkConfiguration(minRTO: .seconds(60), maxRTO: .seconds(60), linkDeadAfter: .seconds(120)),
            handshakeTimeout: .seconds(120), idleTimeout: .seconds(120))
        let data = bytes(400_000, 11)
        var sender = peers.sender([MemoryFileSource(name: "big", bytes: data)])
        let receiver = peers.receiver()
        let (a, b) = try SocketPairTransport.pair(maxDatagramSize: 244, separateDirections: false, sendBuffer: 2_048)
        let receiving = receive(receiver, over: b)
        let sent = try await EndpointRunner.runSender(&sender, over: a) { _ in }
        await a.close()
        #expect(try await receiving.value == .finished)
        await b.close()
        #expect(sent == .finished)
        #expect(peers.store.value.committed["big"] == data)
        let statistics = try #require(sender.linkStatistics)
        #expect(statistics.retransmissions == 0)
        #expect(statistics.timeouts == 0)
    }

    /// One side's transport is closed mid-transfer (as a D-Bus disconnect watch does): its loop
    /// wakes and ends, its sockets close, and the other side sees the hang-up: both lost the link.
    @Test func aPeerClosingMidTransferIsALostLink() async throws {
        let peers = Peers()
        var sender = peers.sender([MemoryFileSource(name: "big", bytes: bytes(2_000_000, 5))])
        let receiver = peers.receiver()
        let (a, b) = try SocketPairTransport.pair()
        let receiving = receive(receiver, over: b)
        var cut = false
        let sent = try await EndpointRunner.runSender(&sender, over: a) { event in
            if case .transfer(.progress(_, _, let acked)) = event, acked >= 50_000, !cut {
                cut = true
                Task { await b.close() }
            }
        }
        #expect(sent == .linkLost)
        #expect(try await receiving.value == .linkLost)
        await a.close()
        #expect(peers.store.value.committed.isEmpty)
        #expect(receiver.value.partialTransfers == 1)
    }

    /// `close()` from another task wakes a loop that is waiting with nothing to do: by the wake
    /// signal alone when the transport raises it (the sockets stay open, so the loop's periodic
    /// check cannot be what ended it), by that check when it does not. No timing is asserted
    /// beyond a bound that only a loop that never wakes would pass.
    @Test(arguments: [true, false])
    func closingTheTransportWakesAnIdleLoop(wakes: Bool) async throws {
        let peers = Peers()
        let receiver = peers.receiver()
        let (a, b) = try SocketPairTransport.pair(wakes: wakes)
        let receiving = receive(receiver, over: b)
        try await Task.sleep(for: .milliseconds(200))
        let closedAt = ContinuousClock.now
        if wakes { b.raiseCloseSignalOnly() } else { await b.close() }
        #expect(try await receiving.value == .linkLost)
        #expect(ContinuousClock.now - closedAt < .seconds(10))
        await b.close()
        await a.close()
    }

    /// Cancelling the task that waits for the pump ends the connection as a lost link, whatever the port.
    @Test func cancellingTheCallerEndsTheLoop() async throws {
        let peers = Peers()
        let receiver = peers.receiver()
        let (a, b) = try SocketPairTransport.pair()
        let receiving = receive(receiver, over: b)
        try await Task.sleep(for: .milliseconds(100))
        receiving.cancel()
        #expect(try await receiving.value == .linkLost)
        await a.close()
        await b.close()
    }

    /// An empty datagram is a datagram (a malformed frame the link drops), not the end of the
    /// socket; only the peer's hang-up ends the loop.
    @Test func anEmptyDatagramDoesNotEndTheLoop() async throws {
        let peers = Peers()
        let receiver = peers.receiver()
        let (peer, ours) = try socketPair()
        let transport = SocketPairTransport(DatagramSockets(inbound: ours, outbound: ours), maxDatagramSize: 510)
        let ended = Atomic(false)
        let receiving = Task {
            defer { ended.store(true, ordering: .sequentiallyConsistent) }
            return try await EndpointRunner.runReceiver(&receiver.value, over: transport, clock: MonotonicClock()) { _ in }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(send(peer, []) == 0)
        #expect(send(peer, [1, 2, 3]) == 3)
        try await Task.sleep(for: .milliseconds(300))
        let endedEarly = ended.load(ordering: .sequentiallyConsistent)
        #expect(!endedEarly)
        Glibc.close(peer)
        #expect(try await receiving.value == .linkLost)
        #expect(receiver.value.linkStatistics == nil || receiver.value.linkStatistics!.droppedCorrupt >= 1)
        await transport.close()
    }

    @Test func theBatchReaderTellsAnEmptyDatagramFromTheEnd() throws {
        let (peer, ours) = try socketPair()
        defer { Glibc.close(ours) }
        let reader = DatagramBatchReader(capacity: 4, slotSize: 16)
        #expect(reader.read(ours) == .wouldBlock)
        for datagram: [UInt8] in [[1], [], Array(repeating: 9, count: 20), [2, 3]] { _ = send(peer, datagram) }
        #expect(reader.read(ours) == .datagrams([[1], [], Array(repeating: 9, count: 16), [2, 3]]))
        _ = send(peer, [])
        Glibc.close(peer)
        #expect(reader.read(ours) == .ended(before: []))
    }

    @Test func theBatchWriterSaysHowManyTheSocketTook() throws {
        let (peer, ours) = try socketPair(sendBuffer: 2_048)
        defer { Glibc.close(ours) }
        let writer = DatagramBatchWriter(capacity: 32, slotSize: 8)
        var taken = 0
        var full = false
        for _ in 0..<100 {
            switch writer.write(Array(repeating: Array(repeating: UInt8(7), count: 400), count: 32), to: ours) {
            case .sent(let count):
                taken += count
                if count < 32 { full = true }
            case .wouldBlock: full = true
            case .failed: Issue.record("failed")
            }
            if full { break }
        }
        #expect(full)
        let reader = DatagramBatchReader(capacity: 32, slotSize: 512)
        var read = 0
        while case .datagrams(let batch) = reader.read(peer) {
            #expect(batch.allSatisfy { $0 == Array(repeating: 7, count: 400) })
            read += batch.count
        }
        #expect(read == taken)
        Glibc.close(peer)
        #expect(writer.write([[1]], to: ours) == .failed)
    }
}

@discardableResult
func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
}
