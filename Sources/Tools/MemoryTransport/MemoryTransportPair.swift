import Pipeline
import Synchronization

/// Two in-memory `DatagramTransport`s connected to each other in real time, for driver tests.
///
/// Each direction is a bounded queue: `send` suspends while the peer's queue is full
/// (back-pressure, never loss). `close()` on either end closes both: pending and later calls on
/// both ends throw `TransportError.closed`. `receive` and a suspended `send` honour task
/// cancellation (`CancellationError`).
public struct MemoryTransportPair: Sendable {
    public let first: MemoryTransport
    public let second: MemoryTransport
    private let size: SharedSize

    public init(maxDatagramSize: Int = 244, queueCapacity: Int = 64) {
        let size = SharedSize(maxDatagramSize)
        let forward = DatagramChannel(capacity: queueCapacity)
        let backward = DatagramChannel(capacity: queueCapacity)
        self.size = size
        self.first = MemoryTransport(outbound: forward, inbound: backward, size: size)
        self.second = MemoryTransport(outbound: backward, inbound: forward, size: size)
    }

    /// Both ends' datagram size (an MTU change).
    public var maxDatagramSize: Int {
        get { size.value.withLock { $0 } }
        nonmutating set { size.value.withLock { $0 = newValue } }
    }
}

final class SharedSize: Sendable {
    let value: Mutex<Int>
    init(_ value: Int) { self.value = Mutex(value) }
}

/// One end of a `MemoryTransportPair`.
public final class MemoryTransport: DatagramTransport {
    private let outbound: DatagramChannel
    private let inbound: DatagramChannel
    private let size: SharedSize

    init(outbound: DatagramChannel, inbound: DatagramChannel, size: SharedSize) {
        self.outbound = outbound
        self.inbound = inbound
        self.size = size
    }

    public var maxDatagramSize: Int { size.value.withLock { $0 } }

    /// Datagrams sent by the peer and not yet received here.
    public var queuedCount: Int { inbound.queuedCount }

    public func send(_ datagram: [UInt8]) async throws {
        let limit = maxDatagramSize
        guard datagram.count <= limit else {
            throw TransportError.datagramTooLarge(size: datagram.count, limit: limit)
        }
        try await outbound.send(datagram)
    }

    public func receive() async throws -> [UInt8] {
        try await inbound.receive()
    }

    public func receiveAvailable() async throws -> [[UInt8]] {
        try await inbound.receiveAvailable()
    }

    public func close() async {
        outbound.close()
        inbound.close()
    }
}
