import Framing
import Handshake
import Keys
import MemoryTransport
import Pipeline
import Record
import Session
import Sodium
import Transfer

/// A trusted sender gone bad, for the attack tests: it runs the real handshake with its own key
/// (so the receiver authenticates it), then seals whatever records its script lists, including
/// what `SenderSession` never sends: more bytes than it offered, messages out of order, records
/// after the final one. Built from the public layers (framing, Noise IK, record layer); the
/// production sender has no hook for any of this.
public struct ScriptedSender {
    public enum Step: Sendable {
        /// A transfer message in a record, final exactly when it is `bye` (as an honest sender
        /// does). Records after a final one are sealed anyway, at the counter that follows.
        case message(TransferMessage)
        /// Any plaintext sealed as one record with this final flag (a malformed message, a data
        /// message in a final record).
        case record([UInt8], isFinal: Bool)
        /// A framing message sent as it is, not sealed (message 1 again, mid-session).
        case unsealed([UInt8])
    }

    public struct Outcome {
        /// The receiver answered message 1 with the one-byte refusal.
        public var refused = false
        /// What the receiver answered, decrypted: the reply in message 2, then its records.
        public var replies: [TransferMessage] = []
        /// The error the receiver's session threw, if any (the connection then ends).
        public var receiverError: SessionError?
        public var receiverEvents: [ReceiverSession.Event] = []
        /// The receiver considers the connection finished (goodbye exchanged, or refusal sent).
        public var receiverCompleted = false
    }

    public let identity: Identity
    public let receiverKey: PublicKey
    /// The plaintext of message 1 after the timestamp: normally an encoded `offer`.
    public var opening: [UInt8]
    public var script: [Step]
    /// Nanoseconds since the Unix epoch, carried in message 1 (replay protection).
    public var wallClock: UInt64 = LoopbackRun.wallClockBase

    public init(identity: Identity, receiverKey: PublicKey, opening: TransferMessage, script: [Step]) {
        self.identity = identity
        self.receiverKey = receiverKey
        self.opening = opening.encoded()
        self.script = script
    }

    public init(identity: Identity, receiverKey: PublicKey, openingBytes: [UInt8], script: [Step]) {
        self.identity = identity
        self.receiverKey = receiverKey
        self.opening = openingBytes
        self.script = script
    }

    /// Connects to `receiver` (which must not be connected), plays the script, and runs both ends
    /// on the virtual network until the receiver fails, finishes, or nothing moves for
    /// `quietLimit`. The receiver's connection is left open: the caller ends it (`linkLost`) as a
    /// driver would.
    public func run(against receiver: inout ReceiverSession, datagramSize: Int = 244, now start: Instant = .zero,
                    quietLimit: Duration = .seconds(5)) -> Outcome {
        var outcome = Outcome()
        var sender: ScriptedPeer<Script>
        do {
            try receiver.accept(maxDatagramSize: datagramSize, now: start, wallClock: LoopbackRun.wallClockBase + start.nanoseconds)
            var initiator = try NoiseIKInitiator(localStatic: identity.secretKey, remoteStatic: receiverKey.bytes,
                                                 prologue: blesendPrologue)
            var payload: [UInt8] = []
            payload.appendBigEndian(wallClock)
            var end = AttackerLink(datagramSize: datagramSize)
            try end.link.send(message: try initiator.writeMessage1(payload: payload + opening))
            sender = ScriptedPeer(end: end, script: Script(steps: script, initiator: initiator))
        } catch let error as SessionError {
            outcome.receiverError = error
            return outcome
        } catch {
            return outcome
        }
        var network = VirtualNetwork.perfect(at: start)
        do {
            let ending = try network.run(&sender, &receiver, quietLimit: quietLimit) { _, receiver in receiver.connectionComplete }
            outcome.receiverCompleted = ending == .done
        } catch {
            if case .b(let failure) = error { outcome.receiverError = failure }
        }
        outcome.refused = sender.script.refused
        outcome.replies = sender.script.replies
        outcome.receiverEvents = receiver.takeEvents()
        return outcome
    }

    /// The scripted sender: message 1 (sent at the start), then the script sealed as records once
    /// message 2 has given the keys; it decrypts what the receiver answers.
    struct Script: PeerScript {
        let steps: [Step]
        var initiator: NoiseIKInitiator
        var opener: RecordOpener?
        var refused = false
        var replies: [TransferMessage] = []

        mutating func answer(_ message: [UInt8]) -> [[UInt8]] {
            if var open = opener {
                var records: [Record] = []
                if (try? open.decode(message, into: &records)) != nil, let record = records.first,
                   let reply = try? TransferMessage(decoding: record.plaintext) {
                    replies.append(reply)
                }
                opener = open
                return []
            }
            if message == refusalMessage {
                refused = true
                return []
            }
            guard let reply = try? initiator.readMessage2(message), let keys = try? initiator.split() else { return [] }
            if let decoded = try? TransferMessage(decoding: reply) { replies.append(decoded) }
            var seal = RecordSealer(key: keys.initiatorToResponder)
            opener = RecordOpener(key: keys.responderToInitiator)
            var out: [[UInt8]] = []
            for step in steps {
                let record: Record
                switch step {
                case .message(let message): record = Record(plaintext: message.encoded(), isFinal: message == .bye)
                case .record(let plaintext, let isFinal): record = Record(plaintext: plaintext, isFinal: isFinal)
                case .unsealed(let bytes):
                    out.append(bytes)
                    continue
                }
                if record.isFinal {
                    // The sealer refuses to seal after a final record: seal this one with a copy
                    // at the same counter, and move the original past it with a throwaway record.
                    var copy = seal
                    try? copy.encode(record, into: &out)
                    var discarded: [[UInt8]] = []
                    try? seal.encode(Record(plaintext: [0]), into: &discarded)
                } else {
                    try? seal.encode(record, into: &out)
                }
            }
            return out
        }
    }
}
