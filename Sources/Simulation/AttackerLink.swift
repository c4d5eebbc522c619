import Framing
import MemoryTransport
import Pipeline

/// An attacker's end of a link: valid framing around whatever messages it chooses, and nothing
/// that goes wrong on its side stops a run (its own errors are the attacker's business).
struct AttackerLink: DatagramEndpoint {
    typealias Failure = Never
    var link: ReliableLink
    /// Every message the other side sent, in order.
    private(set) var received: [[UInt8]] = []

    init(datagramSize: Int) { link = ReliableLink(maxDatagramSize: datagramSize) }

    mutating func nextDatagram(now: Instant) -> [UInt8]? { link.nextDatagram(now: now) }

    mutating func receive(datagram: [UInt8], now: Instant) {
        try? link.receive(datagram: datagram, now: now)
        while let message = link.nextMessage() { received.append(message) }
    }

    mutating func handleTimers(now: Instant) { try? link.handleTimers(now: now) }

    var nextDeadline: Instant? { link.nextDeadline }
}

/// The link every simulation uses unless it studies faults: no loss, no delay.
func perfectNetwork(at start: Instant = .zero) -> VirtualNetwork {
    VirtualNetwork(link: SimulatedLink(faults: .perfect, maxDatagramSize: .max, seed: 0), now: start)
}
