import MemoryTransport
import Pipeline
import Testing

@Suite struct MemoryTransportPairTests {
    @Test func roundTripBothWays() async throws {
        let pair = MemoryTransportPair(maxDatagramSize: 20)
        try await pair.first.send([1, 2, 3])
        try await pair.second.send([4])
        #expect(try await pair.second.receive() == [1, 2, 3])
        #expect(try await pair.first.receive() == [4])
        #expect(pair.first.maxDatagramSize == 20)
        await #expect(throws: TransportError.datagramTooLarge(size: 21, limit: 20)) {
            try await pair.first.send([UInt8](repeating: 0, count: 21))
        }
        pair.maxDatagramSize = 244
        #expect(pair.second.maxDatagramSize == 244)
        try await pair.first.send([UInt8](repeating: 0, count: 21))
    }

    @Test func receiveWaitsForSend() async throws {
        let pair = MemoryTransportPair()
        async let got = pair.second.receive()
        try await Task.sleep(for: .milliseconds(20))
        try await pair.first.send([7, 7])
        #expect(try await got == [7, 7])
    }

    @Test func manyInOrder() async throws {
        let pair = MemoryTransportPair(queueCapacity: 4)
        let sender = Task {
            for i in 0..<1000 { try await pair.first.send([UInt8(i & 0xFF), UInt8(i >> 8)]) }
        }
        for i in 0..<1000 { #expect(try await pair.second.receive() == [UInt8(i & 0xFF), UInt8(i >> 8)]) }
        try await sender.value
    }

    @Test func sendBlocksWhenQueueIsFull() async throws {
        let pair = MemoryTransportPair(queueCapacity: 2)
        try await pair.first.send([1])
        try await pair.first.send([2])
        let third = Task { try await pair.first.send([3]) ; return true }
        try await Task.sleep(for: .milliseconds(50))
        #expect(pair.second.queuedCount == 2)   // the third is held back, not queued or lost
        #expect(try await pair.second.receive() == [1])
        #expect(try await third.value)
        #expect(try await pair.second.receive() == [2])
        #expect(try await pair.second.receive() == [3])
    }

    @Test func closeWakesBlockedReceiveAndSend() async throws {
        let pair = MemoryTransportPair(queueCapacity: 1)
        let receiver = Task { try await pair.first.receive() }
        try await pair.first.send([1])
        let blockedSender = Task { try await pair.first.send([2]) }
        try await Task.sleep(for: .milliseconds(50))
        await pair.second.close()
        await #expect(throws: TransportError.closed) { try await receiver.value }
        await #expect(throws: TransportError.closed) { try await blockedSender.value }
        await #expect(throws: TransportError.closed) { try await pair.second.receive() }
        await #expect(throws: TransportError.closed) { try await pair.first.send([3]) }
        await #expect(throws: TransportError.closed) { try await pair.second.send([3]) }
    }

    @Test func cancellationEndsAWait() async throws {
        let pair = MemoryTransportPair()
        let receiver = Task { try await pair.first.receive() }
        try await Task.sleep(for: .milliseconds(20))
        receiver.cancel()
        await #expect(throws: CancellationError.self) { try await receiver.value }
        // The transport still works afterwards.
        try await pair.second.send([5])
        #expect(try await pair.first.receive() == [5])
    }
}
