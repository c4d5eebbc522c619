import Framing
import Pipeline

/// An attacker's (or a fuzzer's) end of a link: valid framing around whatever messages it
/// chooses, and nothing that goes wrong on its side stops a run (its own errors are its business).
public struct AttackerLink: DatagramEndpoint {
    public typealias Failure = Never
    public var link: ReliableLink
    /// Every message the other side sent, in order, not yet taken.
    public private(set) var received: [[UInt8]] = []

    public init(link: ReliableLink) { self.link = link }
    public init(datagramSize: Int) { self.init(link: ReliableLink(maxDatagramSize: datagramSize)) }

    /// The messages received since the last call.
    public mutating func takeReceived() -> [[UInt8]] {
        defer { received.removeAll() }
        return received
    }

    public mutating func nextDatagram(now: Instant) -> [UInt8]? { link.nextDatagram(now: now) }

    public mutating func receive(datagram: [UInt8], now: Instant) {
        try? link.receive(datagram: datagram, now: now)
        while let message = link.nextMessage() { received.append(message) }
    }

    public mutating func handleTimers(now: Instant) { try? link.handleTimers(now: now) }

    public var nextDeadline: Instant? { link.nextDeadline }
}

/// What a scripted peer says: its answer (whole messages, framed by its `AttackerLink`) to each
/// message the other side sent.
public protocol PeerScript {
    mutating func answer(_ message: [UInt8]) -> [[UInt8]]
}

/// A scripted peer on the virtual network: an `AttackerLink` whose received messages go to
/// `script`, and whose answers go back over the same link.
public struct ScriptedPeer<Script: PeerScript>: DatagramEndpoint {
    public typealias Failure = Never
    public var end: AttackerLink
    public var script: Script

    public init(end: AttackerLink, script: Script) {
        self.end = end
        self.script = script
    }

    public mutating func nextDatagram(now: Instant) -> [UInt8]? { end.nextDatagram(now: now) }

    public mutating func receive(datagram: [UInt8], now: Instant) {
        end.receive(datagram: datagram, now: now)
        for message in end.takeReceived() {
            for answer in script.answer(message) { try? end.link.send(message: answer) }
        }
    }

    public mutating func handleTimers(now: Instant) { end.handleTimers(now: now) }

    public var nextDeadline: Instant? { end.nextDeadline }
}
