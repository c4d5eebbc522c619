import Framing
import Handshake
import Keys
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

    /// Connects `sender` to this receiver and runs both on a virtual clock until the sender
    /// fails, finishes, or nothing moves for five virtual seconds.
    func run(_ sender: inout SenderSession, datagramSize: Int = 244) -> Outcome {
        var outcome = Outcome()
        var now = Instant.zero
        var link = ReliableLink(maxDatagramSize: datagramSize)
        var responder: NoiseIKResponder
        do {
            responder = try NoiseIKResponder(localStatic: identity.secretKey, prologue: blesendPrologue)
            try sender.connect(maxDatagramSize: datagramSize, now: now, wallClock: LoopbackRun.wallClockBase)
        } catch {
            outcome.senderError = error as? SessionError
            return outcome
        }
        var keys: (seal: RecordSealer, open: RecordOpener)?

        func take(_ message: [UInt8]) {
            guard var records = keys else {
                guard let (_, payload) = try? responder.readMessage1(message),
                      case .offer(let offer)? = try? TransferMessage(decoding: payload.dropFirst(8)),
                      let reply = try? responder.writeMessage2(payload: message2(offer)),
                      let split = try? responder.split() else { return }
                try? link.send(message: reply)
                keys = (RecordSealer(key: split.responderToInitiator), RecordOpener(key: split.initiatorToResponder))
                return
            }
            defer { keys = records }
            var opened: [Record] = []
            guard (try? records.open.decode(message, into: &opened)) != nil, let record = opened.first,
                  let incoming = try? TransferMessage(decoding: record.plaintext) else { return }
            outcome.fromSender.append(incoming)
            for plaintext in answer(incoming) {
                var sealed: [[UInt8]] = []
                try? records.seal.encode(Record(plaintext: plaintext, isFinal: plaintext == TransferMessage.bye.encoded()), into: &sealed)
                for bytes in sealed { try? link.send(message: bytes) }
            }
        }

        var quietSince = now
        while outcome.senderError == nil, !sender.isFinished {
            var moved = false
            do {
                while let datagram = try sender.nextDatagram(now: now) {
                    moved = true
                    try? link.receive(datagram: datagram, now: now)
                }
                while let message = link.nextMessage() { take(message) }
                while let datagram = link.nextDatagram(now: now) {
                    moved = true
                    try sender.receive(datagram: datagram, now: now)
                }
            } catch {
                outcome.senderError = error
            }
            outcome.senderEvents += sender.takeEvents()
            if moved {
                quietSince = now
                continue
            }
            if now.duration(since: quietSince) >= .seconds(5) { break }
            now = now.advanced(by: .milliseconds(5))
            try? link.handleTimers(now: now)
            do { try sender.handleTimers(now: now) } catch { outcome.senderError = error }
        }
        outcome.senderEvents += sender.takeEvents()
        return outcome
    }
}
