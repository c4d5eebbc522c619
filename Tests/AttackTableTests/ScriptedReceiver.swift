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
        var receiver: ScriptedPeer<Script>
        do {
            receiver = ScriptedPeer(end: AttackerLink(datagramSize: datagramSize),
                                    script: Script(receiver: self, responder: try NoiseIKResponder(localStatic: identity.secretKey,
                                                                                                   prologue: blesendPrologue)))
            try sender.connect(maxDatagramSize: datagramSize, now: .zero, wallClock: LoopbackRun.wallClockBase)
        } catch {
            outcome.senderError = error as? SessionError
            return outcome
        }
        var network = VirtualNetwork.perfect()
        do throws(VirtualNetwork.Failure<SessionError, Never>) {
            _ = try network.run(&sender, &receiver, quietLimit: .seconds(5)) { sender, _ in sender.isFinished }
        } catch {
            if case .a(let failure) = error { outcome.senderError = failure }
        }
        outcome.senderEvents = sender.takeEvents()
        outcome.fromSender = receiver.script.fromSender
        return outcome
    }

    /// The real handshake, then the script's answers sealed as records.
    struct Script: PeerScript {
        let receiver: ScriptedReceiver
        var responder: NoiseIKResponder
        var keys: (seal: RecordSealer, open: RecordOpener)?
        var fromSender: [TransferMessage] = []

        mutating func answer(_ message: [UInt8]) -> [[UInt8]] {
            guard var records = keys else {
                guard let (_, payload) = try? responder.readMessage1(message),
                      case .offer(let offer)? = try? TransferMessage(decoding: payload.dropFirst(8)),
                      let reply = try? responder.writeMessage2(payload: receiver.message2(offer)),
                      let split = try? responder.split() else { return [] }
                keys = (RecordSealer(key: split.responderToInitiator), RecordOpener(key: split.initiatorToResponder))
                return [reply]
            }
            defer { keys = records }
            var opened: [Record] = []
            guard (try? records.open.decode(message, into: &opened)) != nil, let record = opened.first,
                  let incoming = try? TransferMessage(decoding: record.plaintext) else { return [] }
            fromSender.append(incoming)
            var sealed: [[UInt8]] = []
            for plaintext in receiver.answer(incoming) {
                try? records.seal.encode(Record(plaintext: plaintext, isFinal: plaintext == TransferMessage.bye.encoded()), into: &sealed)
            }
            return sealed
        }
    }
}
