import Framing
import Handshake
import MemoryTransport
import Simulation
import Pipeline
import Record
import Session
import Sodium
import Transfer

/// `receiver-session`: a whole `ReceiverSession` (link, handshake, records, transfer layer, file
/// store) driven by a peer, before and after authentication.
///
/// Input: a mode byte, then operations.
/// - mode 0: raw datagrams (one-byte length);
/// - mode 1: raw messages (two-byte length), framed by an honest link, so message 1 is exactly the
///   fuzzer's bytes;
/// - mode 2: a genuine message 1 from a sender the receiver does not trust, with a fuzzed payload;
/// - mode 3: a genuine message 1 from the trusted sender with a fuzzed payload (timestamp and opening
///   offer), then records the sender seals: `0` a transfer-message plaintext (bit 2: final record),
///   `1` a raw message, `2` time passes, `3` a raw datagram.
/// Bit 2 of the mode byte picks the datagram size (20 or 182 bytes). Bit 3 makes the receiver ask
/// about strangers (`blerecv --ask`, first contact, protocol.md §8.5): in mode 2, a stranger whose
/// message 1 asks for `firstContact` is then told `pending`, and the next input byte is its user's
/// answer (bit 0: yes, under `FixedKeys.approvedName`), followed by records as in mode 3.
///
/// Invariants:
/// - **no file is created from unauthenticated input**: the file store traps on `begin` unless the
///   first message of the connection is a genuine message 1 from the trusted sender (byte for byte
///   what that sender writes; a shadow link reassembles the same datagrams to tell), or the
///   receiver's user accepted a stranger, and then only for that sender's name; no `authenticated`
///   or transfer event comes without it, and no question about a sender from a receiver that does
///   not ask;
/// - bounded memory: a file never holds more than its offer announced nor more than `maxFileSize`;
///   at most one temporary file per connection, at most 4 folders being built (extension
///   `folders`: the store takes folders too); the link's reorder buffer stays under its window;
/// - a committed file's content hashes to the hash the sender sent in `done`;
/// - after `shutdown` no temporary file and no folder being built is left.
let receiverSessionTarget = FuzzTarget(
    name: "receiver-session",
    summary: "a peer's datagrams into ReceiverSession before and after the handshake; file-store audit",
    run: runReceiverSession,
    seeds: receiverSessionSeeds)

let receiverSessionMaxFileSize: UInt64 = 1 << 20

enum ReceiverSessionMode: UInt8 {
    case rawDatagrams = 0, rawMessages, strangerHandshake, trustedHandshake
}

/// The fuzzer's peer and the receiver under test on the virtual network (perfect link). The
/// fuzzer plays time itself (`advance`); the network's rounds move the datagrams.
private struct Harness {
    var network = VirtualNetwork.perfect()
    var peer: AttackerLink
    var receiver: AuditedReceiver
    var doneHashes: [[UInt8]] = []

    init(datagramSize: Int, asks: Bool) {
        let configuration = SessionConfiguration()
        peer = AttackerLink(link: ReliableLink(configuration: configuration.link, maxDatagramSize: datagramSize))
        receiver = AuditedReceiver(datagramSize: datagramSize, configuration: configuration, asks: asks)
    }

    /// The receiver's user answers a first contact question (if one is asked); returns what the
    /// receiver sends then.
    mutating func answer(yes: Bool) -> [[UInt8]] {
        receiver.answer(yes: yes, now: network.now)
        return pump()
    }

    /// One datagram straight to the receiver.
    mutating func deliver(datagram: [UInt8]) {
        receiver.receive(datagram: datagram, now: network.now)
    }

    /// Rounds until both sides are quiet (at most 64), without moving the clock (the fuzzer plays
    /// time itself); returns the messages the peer got.
    mutating func pump() -> [[UInt8]] {
        var rounds = 0
        _ = try? network.run(&peer, &receiver, until: network.now) { _, _, _, step in
            rounds += 1
            return step != .round(.moved) || rounds >= 64
        }
        return peer.takeReceived()
    }

    mutating func send(message: [UInt8]) -> [[UInt8]] {
        guard receiver.connected, (try? peer.link.send(message: message)) != nil else { return [] }
        return pump()
    }

    mutating func advance(_ step: UInt8) {
        try? network.advance(by: .milliseconds(Int64(step) * 20), &peer, &receiver)
        _ = pump()
    }

    mutating func finish() {
        receiver.finish(now: network.now)
        for file in receiver.store.committed {
            let hash = BLAKE2b.hash(file, outputLength: 32)
            require(doneHashes.contains(hash), "a committed file does not match any hash the sender sent")
        }
    }
}

/// The receiver under test, audited after every call: it disconnects on an error, as the driver
/// does, and checks the invariants each time.
private struct AuditedReceiver: DatagramEndpoint {
    typealias Failure = Never
    var session: ReceiverSession
    let store = AuditingFileStore()
    /// Receives the same datagrams as the session, to see which message 1 it got.
    var shadow: ReliableLink
    var firstMessageSeen = false
    var connected = true
    var authenticatedSeen = false
    let window: Int
    let asks: Bool
    /// A first contact question was asked on this connection and not yet answered.
    var asked = false

    init(datagramSize: Int, configuration: SessionConfiguration, asks: Bool) {
        window = configuration.link.window
        self.asks = asks
        session = ReceiverSession(identity: FixedKeys.receiver, trust: FixedKeys.trust, store: store,
                                  configuration: configuration, maxFileSize: receiverSessionMaxFileSize, asksAboutStrangers: asks)
        shadow = ReliableLink(configuration: configuration.link, maxDatagramSize: datagramSize)
        do {
            try session.accept(maxDatagramSize: datagramSize, now: .zero, wallClock: FixedKeys.wallClock,
                               ephemeral: FixedKeys.responderEphemeral)
        } catch {
            fatalError("accept failed: \(error)")
        }
    }

    mutating func nextDatagram(now: Instant) -> [UInt8]? { connected ? session.nextDatagram(now: now) : nil }

    mutating func receive(datagram: [UInt8], now: Instant) {
        guard connected else { return }
        if !firstMessageSeen {
            try? shadow.receive(datagram: datagram, now: now)
            if let first = shadow.nextMessage() {
                firstMessageSeen = true
                if isGenuineTrustedMessage1(first) { store.allowedSender = FixedKeys.trustedName }
            }
        }
        do {
            try session.receive(datagram: datagram, now: now)
        } catch {
            disconnect(now: now)
        }
        audit()
    }

    mutating func handleTimers(now: Instant) {
        if connected {
            do { try session.handleTimers(now: now) } catch { disconnect(now: now) }
        }
        audit()
    }

    var nextDeadline: Instant? { connected ? session.nextDeadline : nil }

    /// First contact: the user's answer to the question asked, as the driver gives it.
    mutating func answer(yes: Bool, now: Instant) {
        guard connected, asked else { return }
        asked = false
        do {
            if yes {
                // The store may take the stranger's files from the moment its user accepts it.
                store.allowedSender = FixedKeys.approvedName
                try session.approve(name: FixedKeys.approvedName, now: now)
            } else {
                try session.decline(now: now)
            }
        } catch {
            disconnect(now: now)
        }
        audit()
    }

    /// Ends the connection after an error, as the driver does.
    mutating func disconnect(now: Instant) {
        guard connected else { return }
        connected = false
        session.linkLost(now: now)
    }

    mutating func audit() {
        for event in session.takeEvents() {
            switch event {
            case .authenticated(let sender, _):
                require(store.allowedSender == sender, "\(sender) authenticated without a genuine message 1")
                authenticatedSeen = true
            case .transfer:
                require(authenticatedSeen, "a transfer event before authentication: \(event)")
            case .refused:
                break
            case .approvalNeeded(let request):
                require(asks, "a receiver that does not ask asked about a sender: \(event)")
                require(request.key == FixedKeys.strangerSender.publicKey, "asked about a key that is not the stranger's")
                require(store.allowedSender == nil, "asked about a sender on a connection already authenticated")
                asked = true
            }
        }
        require(store.begun == 0 || authenticatedSeen, "a file was created in a call that did not authenticate")
        require(store.open <= 1, "\(store.open) temporary files on one connection")
        require(store.openTrees <= 4, "\(store.openTrees) folders being built")
        if let statistics = session.linkStatistics {
            require(statistics.maxReorderBuffered < window, "reorder buffer reached \(statistics.maxReorderBuffered)")
        }
    }

    mutating func finish(now: Instant) {
        disconnect(now: now)
        session.shutdown()
        audit()
        require(store.open == 0, "\(store.open) temporary files left after shutdown")
        require(store.openTrees == 0, "\(store.openTrees) folders left after shutdown")
    }
}

/// Whether `message` is byte for byte a message 1 the trusted sender writes (fixed ephemeral) for
/// whatever payload it carries. The fuzzer cannot make one without the sender's keys; it can only
/// replay one (the seeds hold some).
private func isGenuineTrustedMessage1(_ message: [UInt8]) -> Bool {
    var responder = HandshakeTemplates.responder
    guard message.count >= 96, let (remoteStatic, payload) = try? responder.readMessage1(message),
        remoteStatic == FixedKeys.trustedSender.publicKey.bytes
    else { return false }
    return genuineMessage1(from: FixedKeys.trustedSender, payload: payload) == message
}

private func runReceiverSession(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let modeByte = input.byte()
    let mode = ReceiverSessionMode(rawValue: modeByte & 3) ?? .rawDatagrams
    let asks = modeByte & 8 != 0
    var harness = Harness(datagramSize: modeByte & 4 != 0 ? 182 : 20, asks: asks)
    defer { harness.finish() }

    switch mode {
    case .rawDatagrams:
        while !input.isEmpty { harness.deliver(datagram: input.chunk()) }
    case .rawMessages:
        while !input.isEmpty {
            let message = input.chunk16()
            if message.isEmpty { harness.advance(input.byte()) } else { _ = harness.send(message: message) }
        }
    case .strangerHandshake, .trustedHandshake:
        var initiator = mode == .trustedHandshake ? HandshakeTemplates.trustedInitiator : HandshakeTemplates.strangerInitiator
        guard let message1 = try? initiator.writeMessage1(payload: input.chunk16()) else { return }
        let answers = harness.send(message: message1)
        if mode == .strangerHandshake, !(asks && harness.receiver.asked) {
            require(answers.allSatisfy { $0 == refusalMessage }, "a stranger got an answer other than the refusal")
            return
        }
        guard let message2 = answers.first, (try? initiator.readMessage2(message2)) != nil,
              let keys = try? initiator.split() else { return }
        var channel = RecordChannel(sendKey: keys.sendKey, receiveKey: keys.receiveKey,
                                    rekeyAfter: SessionConfiguration().rekeyAfterRecords)
        if mode == .strangerHandshake { _ = harness.answer(yes: input.byte() & 1 != 0) }
        while !input.isEmpty {
            let operation = input.byte()
            switch operation & 3 {
            case 0:
                let plaintext = input.chunk()
                if let message = try? TransferMessage(decoding: plaintext) { harness.doneHashes += doneHashes(in: message) }
                var sealed: [[UInt8]] = []
                guard (try? channel.encode(Record(plaintext: plaintext, isFinal: operation & 4 != 0), into: &sealed)) != nil
                else { continue }
                for record in sealed { _ = harness.send(message: record) }
            case 1:
                let message = input.chunk16()
                if !message.isEmpty { _ = harness.send(message: message) }
            case 2:
                harness.advance(input.byte())
            default:
                harness.deliver(datagram: input.chunk())
                _ = harness.pump()
            }
        }
    }
}

/// The hashes of the `done` messages in `message` (a `batch` may hold several).
private func doneHashes(in message: TransferMessage) -> [[UInt8]] {
    switch message {
    case .done(_, let hash): [hash]
    case .batch(let messages): messages.flatMap(doneHashes(in:))
    default: []
    }
}
