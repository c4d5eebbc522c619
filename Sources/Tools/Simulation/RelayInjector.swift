import Framing
import MemoryTransport
import Pipeline
import Session

/// An attacker alone on a link with a receiver: it sends whole messages of its choosing (with
/// valid framing) and collects what the receiver answers.
public struct RelayInjector {
    public private(set) var receiver: ReceiverSession
    public private(set) var events: [ReceiverSession.Event] = []
    public private(set) var answers: [[UInt8]] = []
    /// The error that ended the receiver's connection (a failed datagram or a timer), if any.
    public private(set) var error: SessionError?

    public init(receiver: ReceiverSession) { self.receiver = receiver }

    /// Opens a connection, sends `message`, and runs both ends for a second of virtual time.
    /// Returns true if the receiver took the message without failing the connection.
    public mutating func inject(_ message: [UInt8], datagramSize: Int = 244) -> Bool {
        inject([message], datagramSize: datagramSize)
    }

    /// Opens a connection at `start`, sends `messages` in order on it, and runs both ends for
    /// `duration` of virtual time (5 ms steps; timers run) or until the receiver fails the
    /// connection. The connection is then ended as a driver would (`linkLost`). Returns false if
    /// a datagram made the receiver fail the connection (a timer running out is not a failure here).
    public mutating func inject(_ messages: [[UInt8]], datagramSize: Int = 244, start: Instant = .zero,
                                for duration: Duration = .seconds(1)) -> Bool {
        var attacker = AttackerLink(datagramSize: datagramSize)
        var network = VirtualNetwork.perfect(at: start)
        do {
            try receiver.accept(maxDatagramSize: datagramSize, now: start, wallClock: LoopbackRun.wallClockBase + start.nanoseconds)
            for message in messages { try attacker.link.send(message: message) }
        } catch {
            return false
        }
        defer {
            answers += attacker.received
            events += receiver.takeEvents()
            receiver.linkLost(now: network.now)
            events += receiver.takeEvents()
        }
        do {
            _ = try network.run(&attacker, &receiver, until: start.advanced(by: duration))
        } catch {
            guard case .b(let failure) = error else { return true }
            self.error = failure
            // A timer running out is not a failure here; a datagram the receiver refused is.
            return network.failurePhase == .timers
        }
        return true
    }
}
