import Framing
import Handshake
import Keys
import MemoryTransport
import Pipeline
import Record
import Transfer

/// A trusted sender that takes its time, for the attack tests on the virtual network: the real
/// handshake with its own key, then each of its messages sealed as a record at the time given,
/// and, at other times, whatever raw datagrams it is told to inject (junk that should not count
/// as the sender being alive). Unlike `ScriptedSender`, whose script goes out at once, this one
/// shows what a slow sender, or a stalled one that keeps the radio busy, does to a receiver's
/// idle timeout.
public struct PacedSender: DatagramEndpoint {
    public typealias Failure = Never

    /// Something sent at `at`: a message sealed as the next record (final exactly when it is
    /// `bye`), or a raw datagram made from the datagrams sent so far (a corrupt frame, a replay).
    public enum Item {
        case message(TransferMessage)
        case datagram((_ sentSoFar: [[UInt8]]) -> [UInt8])
    }

    public private(set) var end: AttackerLink
    private var initiator: NoiseIKInitiator
    private var sealer: RecordSealer?
    private var schedule: [(at: Instant, item: Item)]
    /// Every datagram this side sent, in order (raw ones included).
    public private(set) var sent: [[UInt8]] = []
    /// Every message the receiver answered, decrypted: the reply in message 2, then its records.
    public private(set) var replies: [TransferMessage] = []
    private var opener: RecordOpener?

    /// Message 1 (`opening`, from `identity` to `receiverKey`, stamped `wallClock`) goes out at
    /// the start; `schedule` is sorted by time here. Messages due before message 2 has arrived
    /// wait for it.
    public init(identity: Identity, receiverKey: PublicKey, opening: TransferMessage,
                schedule: [(at: Instant, item: Item)], datagramSize: Int = 244,
                wallClock: UInt64 = LoopbackRun.wallClockBase) throws {
        initiator = try NoiseIKInitiator(localStatic: identity.secretKey, remoteStatic: receiverKey.bytes, prologue: blesendPrologue)
        var payload: [UInt8] = []
        payload.appendBigEndian(wallClock)
        end = AttackerLink(datagramSize: datagramSize)
        try end.link.send(message: try initiator.writeMessage1(payload: payload + opening.encoded()))
        self.schedule = schedule.sorted { $0.at < $1.at }
    }

    public mutating func nextDatagram(now: Instant) -> [UInt8]? {
        while let first = schedule.first, first.at <= now {
            switch first.item {
            case .datagram(let make):
                schedule.removeFirst()
                let datagram = make(sent)
                sent.append(datagram)
                return datagram
            case .message(let message):
                guard var seal = sealer else { break }
                schedule.removeFirst()
                var out: [[UInt8]] = []
                try? seal.encode(Record(plaintext: message.encoded(), isFinal: message == .bye), into: &out)
                sealer = seal
                for record in out { try? end.link.send(message: record) }
                continue
            }
            break
        }
        let datagram = end.nextDatagram(now: now)
        if let datagram { sent.append(datagram) }
        return datagram
    }

    public mutating func receive(datagram: [UInt8], now: Instant) {
        end.receive(datagram: datagram, now: now)
        for message in end.takeReceived() {
            if var open = opener {
                var records: [Record] = []
                if (try? open.decode(message, into: &records)) != nil, let record = records.first,
                   let reply = try? TransferMessage(decoding: record.plaintext) {
                    replies.append(reply)
                }
                opener = open
            } else if let reply = try? initiator.readMessage2(message), let keys = try? initiator.split() {
                if let decoded = try? TransferMessage(decoding: reply) { replies.append(decoded) }
                sealer = RecordSealer(key: keys.initiatorToResponder)
                opener = RecordOpener(key: keys.responderToInitiator)
            }
        }
    }

    public mutating func handleTimers(now: Instant) { end.handleTimers(now: now) }

    public var nextDeadline: Instant? {
        let due = schedule.first { item in
            if case .message = item.item { sealer != nil } else { true }
        }?.at
        return [end.nextDeadline, due].compactMap { $0 }.min()
    }
}
