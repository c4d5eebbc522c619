import Keys
import Session
import Simulation
import TestDoubles
import Testing
import Transfer

/// First contact (`blerecv --ask`, protocol.md §8.5): someone other than the sender the user
/// expects gets a handshake through, on its own or by relaying one. The user sees a prompt with
/// that handshake's code, which the expected sender does not show; without a yes nothing is kept.
@Test("attack: a stranger, or a relay, at first contact", arguments: ["stranger with its own key", "relay passing a handshake through"])
func strangerAtFirstContact(variant: String) throws {
    let target = try Target()
    var receiver = ReceiverSession(identity: target.receiverID, trust: TrustStore(peers: []), store: target.store,
                                   asksAboutStrangers: true)
    // The stranger: a sender whose key the user does not expect (for the relay, the genuine
    // sender's handshake, passed through untouched: the code is the one its own screen shows).
    let key = variant == "stranger with its own key" ? Identity.generate() : target.senderID
    var sender: SenderSession? = SenderSession(identity: key, receiverKey: target.receiverID.publicKey,
                                               files: [MemoryFileSource(name: "secret.txt", bytes: secret)])
    let outcome = RelayRun.run(sender: &sender, receiver: &receiver, receiverExtensions: receiver.extensions, tamper: passThrough)

    let asked = outcome.receiverEvents.compactMap { event -> ApprovalRequest? in
        if case .approvalNeeded(let request) = event { return request }
        return nil
    }
    let shown = outcome.senderEvents.compactMap { event -> String? in
        if case .awaitingApproval(let code) = event { return code }
        return nil
    }
    #expect(asked.count == 1 && asked.first?.key == key.publicKey)
    // A relay cannot make the codes differ (it passes one handshake through), nor can it read or
    // change anything: the code the user checks is the one the sender's screen shows.
    #expect(shown == asked.map(\.code))
    // Nobody answered: refused after ApprovalTimeout, nothing trusted, nothing kept.
    #expect(outcome.senderError == .notApprovedByPeer)
    #expect(outcome.receiverEvents.compactMap(\.refusal) == [.approvalTimedOut(fingerprint: key.publicKey.fingerprint)])
    #expect(!outcome.receiverEvents.contains { $0.isAuthenticated })
    #expect(exitStatus(.notApprovedByPeer) == .peerRefused)
    receiver.linkLost(now: .zero)
    expectNothingLeft(target, at: "secret.txt")
}
