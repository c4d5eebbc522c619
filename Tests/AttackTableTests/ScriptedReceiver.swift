import Framing
import Handshake
import Keys
import MemoryTransport
import Pipeline
import Record
import Session
import Simulation
import Transfer

/// A receiver holding the pinned key gone bad, for the attack tests: it runs the real handshake
/// with the key the sender pinned (so the sender authenticates it), then answers with whatever
/// plaintext bytes its script gives, sealed as genuine records: what `ReceiverSession` never
/// says (a confirm with a status or name that is not allowed, a reject with an unknown reason).
struct ScriptedReceiver {
    let identity: Identity
    /// Message 2's payload, given the offer that message 1 carried.
    var message2: (TransferMessage.Offer) -> [UInt8]
    /// Plaintexts to seal as records in answer to one message from the sender (`bye` as a final record).
    var answer: (TransferMessage) -> [[UInt8]]

    struct Outcome {
        var senderError: SessionError?
        var senderEvents: [SenderSession.Event] = []
        /// What the sender said after the handshake, decrypted, in order.
        var fromSender: [TransferMessage] = []
    }

    /// Connects `sender` to this receiver and runs both on the virtual network until the sender
    /// fails, finishes, or nothing moves for five virtual seconds.
    func run(_ sender: inout SenderSession, datagramSize: Int = 244) -> Outcome {
        var outcome = Outcome()
        var receiver: Endpoint
        do {
            receiver = try Endpoint(self, datagramSize: datagramSize)
            try sender.connect(maxDatagramSize: datagramSize, now: .zero, wallClock: LoopbackRun.wallClockBase)
        } catch {
            outcome.senderError = error as? SessionError
            return outcome
        }
        var network = perfectNetwork()
        do throws(VirtualNetwork.Failure<SessionError, Never>) {
            _ = try network.run(&sender, &receiver, quietLimit: .seconds(5)) { sender, _ in sender.isFinished }
        } catch {
            if case .a(let failure) = error { outcome.senderError = failure }
        }
        outcome.senderEvents = sender.takeEvents()
        outcome.fromSender = receiver.fromSender
        return outcome
    }

    /// This receiver's end of the link: the real handshake, then the script's answers sealed as records.
    private struct Endpoint: DatagramEndpoint {
        typealias Failure = Never
        let script: ScriptedReceiver
        var end: AttackerLink
        var responder: NoiseIKResponder
        var keys: (seal: RecordSealer, open: RecordOpener)?
        var fromSender: [TransferMessage] = []

        init(_ script: ScriptedReceiver, datagramSize: Int) throws {
            self.script = script
            end = AttackerLink(datagramSize: datagramSize)
            responder = try NoiseIKResponder(localStatic: script.identity.secretKey, prologue: blesendPrologue)
        }

        mutating func nextDatagram(now: Instant) -> [UInt8]? { end.nextDatagram(now: now) }

        mutating func receive(datagram: [UInt8], now: Instant) {
            end.receive(datagram: datagram, now: now)
            for message in end.takeReceived() { take(message) }
        }

        mutating func handleTimers(now: Instant) { end.handleTimers(now: now) }

        var nextDeadline: Instant? { end.nextDeadline }

        private mutating func take(_ message: [UInt8]) {
            guard var records = keys else {
                guard let (_, payload) = try? responder.readMessage1(message),
                      case .offer(let offer)? = try? TransferMessage(decoding: payload.dropFirst(8)),
                      let reply = try? responder.writeMessage2(payload: script.message2(offer)),
                      let split = try? responder.split() else { return }
                try? end.link.send(message: reply)
                keys = (RecordSealer(key: split.responderToInitiator), RecordOpener(key: split.initiatorToResponder))
                return
            }
            defer { keys = records }
            var opened: [Record] = []
            guard (try? records.open.decode(message, into: &opened)) != nil, let record = opened.first,
                  let incoming = try? TransferMessage(decoding: record.plaintext) else { return }
            fromSender.append(incoming)
            for plaintext in script.answer(incoming) {
                var sealed: [[UInt8]] = []
                try? records.seal.encode(Record(plaintext: plaintext, isFinal: plaintext == TransferMessage.bye.encoded()), into: &sealed)
                for bytes in sealed { try? end.link.send(message: bytes) }
            }
        }
    }
}
