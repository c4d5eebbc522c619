import MemoryTransport
import Pipeline
import Session
@testable import SessionRunner
import SocketIO
import TestDoubles
import Testing
import Transfer

/// The real-time pump carries several connections on one thread and one poll set: two receivers,
/// one over a socket pair (its socket port) and one over an in-memory pair (its async port), on one
/// pump, while their senders run through `EndpointRunner` elsewhere. This is the shape a receiver
/// serving several senders at once takes.
@Test(.timeLimit(.minutes(2)))
func onePumpCarriesTwoConnectionsOnOneThread() async throws {
    let first = Peers(), second = Peers()
    let data = (0..<120_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
    let receivers = Box((first.receiver().value, second.receiver().value))
    let (socketSide, socketFar) = try SocketPairTransport.pair(maxDatagramSize: 510)
    let memory = MemoryTransportPair(maxDatagramSize: 182)
    let clock = MonotonicClock()
    try receivers.value.0.accept(maxDatagramSize: socketFar.maxDatagramSize, now: clock.now, wallClock: EndpointRunner.wallClock())
    try receivers.value.1.accept(maxDatagramSize: memory.second.maxDatagramSize, now: clock.now, wallClock: EndpointRunner.wallClock())

    let pumping = Task { () throws -> [Result<ConnectionEnding, SessionError>?] in
        let wakes = (try #require(WakeSignal()), try #require(WakeSignal()))
        let bells = (try #require(Doorbell()), try #require(Doorbell()))
        let given = try #require(await socketFar.takeSockets(wakingOnClose: wakes.0))
        let sockets = try #require(LoopSockets(given))
        return await LoopThread.run {
            let overSockets = PumpedConnection(ReceiverEndpoint(session: receivers.value.0), port: SocketPort(sockets: sockets, transport: socketFar),
                                               wake: wakes.0, doorbell: bells.0, inputs: AnswerInputs(nil), clock: clock, report: { _ in })
            let inMemory = PumpedConnection(ReceiverEndpoint(session: receivers.value.1),
                                            port: AsyncPort(transport: memory.second, doorbell: bells.1),
                                            wake: wakes.1, doorbell: bells.1, inputs: AnswerInputs(nil), clock: clock, report: { _ in })
            var pump = RealTimePump([overSockets, inMemory])
            pump.run(clock: clock)
            receivers.value = (overSockets.endpoint.session, inMemory.endpoint.session)
            return [overSockets.outcome, inMemory.outcome]
        }
    }
    let senders = Box((first.sender([MemoryFileSource(name: "a", bytes: data)]),
                       second.sender([MemoryFileSource(name: "b", bytes: data)])))
    let viaMemory = Task { try await EndpointRunner.runSender(&senders.value.1, over: memory.first) { _ in } }
    let viaSockets = try await EndpointRunner.runSender(&senders.value.0, over: socketSide) { _ in }
    #expect(viaSockets == .finished)
    #expect(try await viaMemory.value == .finished)
    await socketSide.close()
    await memory.first.close()
    let outcomes = try await pumping.value
    #expect(outcomes.count == 2)
    for outcome in outcomes { #expect(outcome.map { (try? $0.get()) == .finished } == true) }
    #expect(first.store.value.committed["a"] == data)
    #expect(second.store.value.committed["b"] == data)
    await socketFar.close()
}

/// Over a transport whose `send` takes time the async port keeps one datagram in flight, so the
/// endpoint stamps each datagram when the one before has left; in memory it queues a batch.
@Test func theAsyncPortKeepsOneDatagramInFlightOverARadio() {
    final class Radio: DatagramTransport {
        let maxDatagramSize = 244
        func send(_ datagram: [UInt8]) async throws {}
        func receive() async throws -> [UInt8] { throw TransportError.closed }
        func close() async {}
        var transportDescription: TransportDescription { TransportDescription(kind: .gatt, sendSize: 244, receiveSize: 242) }
    }
    #expect(AsyncPort.depth(for: Radio()) == 1)
    #expect(AsyncPort.depth(for: MemoryTransportPair().first) == 32)
}
