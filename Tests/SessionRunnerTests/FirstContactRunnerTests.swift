import Keys
import MemoryTransport
import Pipeline
import Session
import SessionRunner
import Synchronization
import TestDoubles
import Testing
import Transfer

/// First contact through the real driver: the user's answer arrives from elsewhere
/// (`FirstContactAnswers`), while the receiver's loop waits for it.
private func strangerRun(answer: FirstContactAnswers.Answer, sockets: Bool = false) async throws
    -> (sent: Result<EndpointRunner.Ending, SessionError>, senderCodes: [String], receiverCodes: [String], store: MemoryFileStore) {
    let peers = Peers()
    let receiver = Box(ReceiverSession(identity: peers.receiverID, trust: TrustStore(peers: []), store: peers.store.value,
                                       configuration: peers.configuration, asksAboutStrangers: true))
    let offers = receiver.value.extensions
    let answers = FirstContactAnswers()
    let receiverCodes = Mutex<[String]>([])
    // The real-time pump through its async port (a memory pair) or its socket port (a socket pair).
    let (first, second): (any DatagramTransport, any DatagramTransport)
    if sockets {
        (first, second) = try SocketPairTransport.pair(maxDatagramSize: 510)
    } else {
        let pair = MemoryTransportPair(maxDatagramSize: 182)
        (first, second) = (pair.first, pair.second)
    }
    let receiving = Task {
        try await EndpointRunner.runReceiver(&receiver.value, over: second, clock: MonotonicClock(), answers: answers) { event in
            guard case .approvalNeeded(let request) = event else { return }
            receiverCodes.withLock { $0.append(request.code) }
            // The user answers a little later, from another task (as the terminal prompt does).
            Task {
                try? await Task.sleep(for: .milliseconds(300))
                answers.post(answer, to: request)
            }
        }
    }
    var sender = peers.sender([MemoryFileSource(name: "hello.txt", bytes: Array("hi".utf8))])
    var senderCodes: [String] = []
    let sent: Result<EndpointRunner.Ending, SessionError>
    do {
        sent = .success(try await EndpointRunner.runSender(&sender, over: first, receiverExtensions: offers) { event in
            if case .awaitingApproval(let code) = event { senderCodes.append(code) }
        })
    } catch {
        sent = .failure(error)
    }
    await first.close()
    _ = try? await receiving.value
    await second.close()
    return (sent, senderCodes, receiverCodes.withLock { $0 }, peers.store.value)
}

@Test(arguments: [false, true])
func anAnswerFromAnotherTaskReachesTheReceiversLoop(sockets: Bool) async throws {
    let run = try await strangerRun(answer: .approve(name: "bob"), sockets: sockets)
    #expect(run.sent == .success(.finished))
    #expect(run.senderCodes.count == 1 && run.senderCodes == run.receiverCodes)
    #expect(run.store.committed["hello.txt"] == Array("hi".utf8))
}

@Test(arguments: [false, true])
func aNoFromAnotherTaskRefusesTheSender(sockets: Bool) async throws {
    let run = try await strangerRun(answer: .decline, sockets: sockets)
    #expect(run.sent == .failure(.notApprovedByPeer))
    #expect(run.senderCodes == run.receiverCodes)
    #expect(run.store.committed.isEmpty)
}
