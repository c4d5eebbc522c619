import Framing
import Pipeline
import Session

/// An attacker alone on a link with a receiver: it sends whole messages of its choosing (with
/// valid framing) and collects what the receiver answers.
public struct RelayInjector {
    public private(set) var receiver: ReceiverSession
    public private(set) var events: [ReceiverSession.Event] = []
    public private(set) var answers: [[UInt8]] = []
    public private(set) var error: SessionError?

    public init(receiver: ReceiverSession) { self.receiver = receiver }

    /// Opens a connection, sends `message`, and runs both ends until nothing moves. Returns true
    /// if the receiver took the message without failing the connection at once.
    public mutating func inject(_ message: [UInt8], datagramSize: Int = 244) -> Bool {
        var attacker = ReliableLink(maxDatagramSize: datagramSize)
        var now = Instant.zero
        do {
            try receiver.accept(maxDatagramSize: datagramSize, now: now)
            try attacker.send(message: message)
        } catch {
            return false
        }
        for _ in 0..<200 {
            var moved = false
            while let d = attacker.nextDatagram(now: now) {
                do { try receiver.receive(datagram: d, now: now) } catch { self.error = error; return false }
                moved = true
            }
            while let d = receiver.nextDatagram(now: now) {
                try? attacker.receive(datagram: d, now: now)
                moved = true
            }
            while let answer = attacker.nextMessage() { answers.append(answer) }
            events += receiver.takeEvents()
            if !moved {
                now = now.advanced(by: .milliseconds(5))
                try? attacker.handleTimers(now: now)
                try? receiver.handleTimers(now: now)
            }
        }
        return true
    }
}
