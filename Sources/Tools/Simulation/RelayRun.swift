import Framing
import MemoryTransport
import Pipeline
import Session
import Transfer

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

    /// Runs one connection through the relay on the virtual network until the sender finishes,
    /// either side fails, or `limit` of virtual time passes.
    public static func run(sender: inout SenderSession?, receiver: inout ReceiverSession,
                           datagramSize: Int = 244, limit: Duration = .seconds(200), receiverExtensions: TransferExtensions = [],
                           tamper: Tamper) -> Outcome {
        var outcome = Outcome()
        guard var honest = sender else { return outcome }
        do {
            try honest.connect(maxDatagramSize: datagramSize, now: .zero, wallClock: LoopbackRun.wallClockBase,
                               receiverExtensions: receiverExtensions)
        } catch {
            outcome.senderError = error
            return outcome
        }
        do {
            try receiver.accept(maxDatagramSize: datagramSize, now: .zero, wallClock: LoopbackRun.wallClockBase)
        } catch {
            outcome.receiverError = error
            return outcome
        }
        let end = withoutActuallyEscaping(tamper) { tamper in
            var relay = Relay(receiver: receiver, datagramSize: datagramSize, tamper: tamper)
            var network = VirtualNetwork.perfect()
            do throws(VirtualNetwork.Failure<SessionError, SessionError>) {
                _ = try network.run(&honest, &relay, until: Instant.zero.advanced(by: limit)) { sender, _ in sender.isFinished }
            } catch {
                switch error {
                case .a(let failure): outcome.senderError = failure
                case .b(let failure): outcome.receiverError = failure
                }
            }
            return (relay.receiver, relay.seen)
        }
        receiver = end.0
        outcome.seen = end.1
        outcome.senderEvents = honest.takeEvents()
        outcome.senderFinished = honest.isFinished
        outcome.receiverEvents = receiver.takeEvents()
        sender = honest
        return outcome
    }

    /// The attacker and the receiver behind it, as one end of the network: the attacker
    /// terminates the framing towards the sender and towards the receiver and relays whole
    /// messages between them through `tamper`; the hop to the receiver is instantaneous.
    struct Relay: DatagramEndpoint {
        typealias Failure = SessionError
        var receiver: ReceiverSession
        var towardSender: ReliableLink
        /// The attacker's end towards the receiver (its own errors are its business).
        var towardReceiver: AttackerLink
        let tamper: Tamper
        var seen: [Direction: [[UInt8]]] = [:]

        init(receiver: ReceiverSession, datagramSize: Int, tamper: @escaping Tamper) {
            self.receiver = receiver
            towardSender = ReliableLink(maxDatagramSize: datagramSize)
            towardReceiver = AttackerLink(datagramSize: datagramSize)
            self.tamper = tamper
        }

        mutating func receive(datagram: [UInt8], now: Instant) throws(SessionError) {
            try? towardSender.receive(datagram: datagram, now: now)
            while let message = towardSender.nextMessage() { for forwarded in relay(message, .senderToReceiver) { try? towardReceiver.link.send(message: forwarded) } }
            try exchangeWithReceiver(now: now)
        }

        mutating func nextDatagram(now: Instant) throws(SessionError) -> [UInt8]? {
            try exchangeWithReceiver(now: now)
            return towardSender.nextDatagram(now: now)
        }

        mutating func handleTimers(now: Instant) throws(SessionError) {
            try? towardSender.handleTimers(now: now)
            towardReceiver.handleTimers(now: now)
            try receiver.handleTimers(now: now)
            try exchangeWithReceiver(now: now)
        }

        var nextDeadline: Instant? {
            [towardSender.nextDeadline, towardReceiver.nextDeadline, receiver.nextDeadline].compactMap { $0 }.min()
        }

        /// Datagrams both ways between the attacker and the receiver until neither has any: rounds
        /// of the virtual-time pump over the instantaneous hop, at `now` (no timers run), then the
        /// receiver's messages on to the sender.
        private mutating func exchangeWithReceiver(now: Instant) throws(SessionError) {
            var hop = VirtualNetwork.perfect(at: now)
            do {
                _ = try hop.run(&towardReceiver, &receiver, until: now) { _, _, _, step in step != .round(.moved) }
            } catch {
                if case .b(let failure) = error { throw failure }
            }
            for message in towardReceiver.takeReceived() {
                for forwarded in relay(message, .receiverToSender) { try? towardSender.send(message: forwarded) }
            }
        }

        /// What the attacker forwards in place of `message`.
        private mutating func relay(_ message: [UInt8], _ direction: Direction) -> [[UInt8]] {
            let index = seen[direction, default: []].count
            seen[direction, default: []].append(message)
            return tamper(direction, index, message)
        }
    }
}
