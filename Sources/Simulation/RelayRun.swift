import Framing
import Pipeline
import Session

/// An active attacker in the middle: it terminates the framing layer towards both endpoints and
/// relays whole messages (handshake messages and sealed records), so a test can drop, alter,
/// replay, reorder or inject them with valid framing around them. Everything it cannot do —
/// forge a record or a handshake — is what the tests check.
public struct RelayRun {
    public enum Direction: Sendable { case senderToReceiver, receiverToSender }

    /// Given the direction, the index of the message in that direction and the message, returns
    /// what to forward instead (nothing to drop it, several to replay).
    public typealias Tamper = (Direction, Int, [UInt8]) -> [[UInt8]]

    public struct Outcome {
        public var senderError: SessionError?
        public var receiverError: SessionError?
        public var senderFinished = false
        public var senderEvents: [SenderSession.Event] = []
        public var receiverEvents: [ReceiverSession.Event] = []
        /// Every message seen, per direction (for replays in a later run).
        public var seen: [Direction: [[UInt8]]] = [:]
    }

    /// Runs one connection through the relay until the sender finishes, either side fails, or
    /// `steps` rounds pass. Time advances 1 ms per round so timers (acks, timeouts) fire.
    public static func run(sender: inout SenderSession?, receiver: inout ReceiverSession,
                           datagramSize: Int = 244, steps: Int = 200_000, tamper: Tamper) -> Outcome {
        var outcome = Outcome()
        var now = Instant.zero
        var towardSender = ReliableLink(maxDatagramSize: datagramSize)    // the relay's end facing the sender
        var towardReceiver = ReliableLink(maxDatagramSize: datagramSize)  // the relay's end facing the receiver
        var counts: [Direction: Int] = [:]
        do {
            try sender?.connect(maxDatagramSize: datagramSize, now: now, wallClock: LoopbackRun.wallClockBase)
        } catch {
            outcome.senderError = error
            return outcome
        }
        do {
            try receiver.accept(maxDatagramSize: datagramSize, now: now, wallClock: LoopbackRun.wallClockBase + now.nanoseconds)
        } catch {
            outcome.receiverError = error
            return outcome
        }

        func relay(_ message: [UInt8], _ direction: Direction, into link: inout ReliableLink) {
            let index = counts[direction, default: 0]
            counts[direction] = index + 1
            outcome.seen[direction, default: []].append(message)
            for forwarded in tamper(direction, index, message) {
                try? link.send(message: forwarded)
            }
        }

        for _ in 0..<steps {
            var progressed = false
            if var s = sender {
                do {
                    while let d = try s.nextDatagram(now: now) { try towardSender.receive(datagram: d, now: now); progressed = true }
                } catch let error as SessionError {
                    outcome.senderError = error
                } catch {}
                while let d = towardSender.nextDatagram(now: now) {
                    do { try s.receive(datagram: d, now: now) } catch { outcome.senderError = error }
                    progressed = true
                }
                outcome.senderEvents += s.takeEvents()
                outcome.senderFinished = s.isFinished
                sender = s
            }
            while let m = towardSender.nextMessage() { relay(m, .senderToReceiver, into: &towardReceiver) }
            while let d = towardReceiver.nextDatagram(now: now) {
                do { try receiver.receive(datagram: d, now: now) } catch { outcome.receiverError = error }
                progressed = true
            }
            while let d = receiver.nextDatagram(now: now) {
                try? towardReceiver.receive(datagram: d, now: now)
                progressed = true
            }
            while let m = towardReceiver.nextMessage() { relay(m, .receiverToSender, into: &towardSender) }
            outcome.receiverEvents += receiver.takeEvents()
            if outcome.senderError != nil || outcome.receiverError != nil || outcome.senderFinished { break }
            if !progressed {
                now = now.advanced(by: .milliseconds(1))
                try? towardSender.handleTimers(now: now)
                try? towardReceiver.handleTimers(now: now)
                do { try sender?.handleTimers(now: now) } catch { outcome.senderError = error }
                do { try receiver.handleTimers(now: now) } catch { outcome.receiverError = error }
            }
        }
        return outcome
    }
}
