import DequeModule
import Handshake
import Keys
import Pipeline
import Sodium
import Transfer

/// What the receiver's secure channel and the transfer layer above it exchange.
enum ReceiverUnit {
    /// Up: a trusted sender opened the connection with these messages (message 1's payload: an
    /// offer, after a `hello` if it asks for extensions).
    case opened(sender: String, senderKey: [UInt8], [TransferMessage])
    /// Up: an unknown sender that asked for `firstContact` opened the connection with these
    /// messages (a `hello`, then what it offers); the receiver's user will be asked (§8.5).
    case stranger([TransferMessage])
    /// Down: the answer to the opening, which rides in message 2.
    case answer([TransferMessage])
    /// Both ways: one transfer message in a record.
    case message(TransferMessage)
    /// Down: the transfer layer cannot serve the opening; answer with the refusal instead.
    case refuse
}

/// The receiver's secure channel: Noise IK as the responder, then records. It judges message 1
/// (decryption, trust, timestamp) and refuses with one byte that says nothing (or, to an unknown
/// sender that asks for `notTrusted` where it is granted, with a message 2 that says so, §8.7);
/// otherwise it hands the opening up and writes message 2 around the answer that comes down.
///
/// Signals: it raises `peerAuthenticated` when message 2 went to a trusted (or just approved)
/// sender, and `approvalPending` while its user decides about a stranger.
struct ResponderChannel: Layer {
    typealias Lower = [UInt8]
    typealias Upper = ReceiverUnit
    typealias Failure = SessionError
    typealias Signal = StackSignal

    private enum State {
        case awaitingHello(NoiseIKResponder, deadline: Instant)
        case awaitingAnswer(NoiseIKResponder, sender: String, fingerprint: String, deadline: Instant)
        /// Message 2 said `pending` to an unknown sender: the receiver's user decides by `deadline`.
        case awaitingApproval(SecureMessageChannel, Stranger, deadline: Instant)
        case established(SecureMessageChannel)
        /// We sent the refusal; the link closes once it is delivered (or soon after).
        case refusing(SessionError.RefusalReason, deadline: Instant)
        /// Transient, while a value is moved out (so its buffers are not copied on write).
        case busy
    }

    /// An unknown sender waiting for the receiver's user, and what it opened with.
    private struct Stranger {
        let key: [UInt8]
        let fingerprint: String
        /// Message 1's timestamp, remembered by the replay guard once the key is trusted.
        let timestamp: UInt64
        let opening: [TransferMessage]
    }

    private var state: State
    /// Judges message 1: trust, opening, timestamp (against the receiver's shared state).
    private var judge: MessageOneJudge
    private let approvalTimeout: Duration
    /// Message 1 of the stranger being answered (until message 2 goes).
    private var stranger: Stranger?
    private let rekeyAfter: UInt64
    private var down: Deque<[UInt8]> = []
    private var up: Deque<ReceiverUnit> = []
    private(set) var events: [ReceiverSession.Event] = []
    private var signals: [StackSignal] = []
    /// Whether a record from the peer has opened (`peerProvedLive` raised).
    private var provedLive = false

    init(identity: Identity, shared: ReceiverSharedState, wallClock: UInt64,
         ephemeral: SecureBytes?, now: Instant, configuration: SessionConfiguration, grants: TransferExtensions = []) throws(SessionError) {
        do {
            let responder = try NoiseIKResponder(localStatic: identity.secretKey, prologue: blesendPrologue, ephemeral: ephemeral)
            state = .awaitingHello(responder, deadline: now.advanced(by: configuration.handshakeTimeout))
        } catch {
            throw .handshake(error)
        }
        self.judge = MessageOneJudge(shared: shared, grants: grants, acceptedAt: (wallClock, now))
        self.approvalTimeout = configuration.approvalTimeout
        self.rekeyAfter = configuration.rekeyAfterRecords
    }

    var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Whether the receiver's user is being asked about the sender of this connection.
    var isAwaitingApproval: Bool {
        if case .awaitingApproval = state { return true }
        return false
    }

    var isRefusing: Bool {
        if case .refusing = state { return true }
        return false
    }

    mutating func takeEvents() -> [ReceiverSession.Event] {
        defer { events.removeAll() }
        return events
    }

    mutating func nextSignal() -> StackSignal? { signals.isEmpty ? nil : signals.removeFirst() }

    mutating func receive(_ message: [UInt8], now: Instant) throws(SessionError) {
        switch state {
        case .awaitingHello(var responder, let deadline):
            state = .busy
            switch judge.judge(message, responder: &responder, now: now) {
            case .success(let opened) where opened.sender == nil:
                stranger = Stranger(key: opened.key, fingerprint: opened.fingerprint, timestamp: opened.timestamp, opening: opened.opening)
                state = .awaitingAnswer(responder, sender: "", fingerprint: opened.fingerprint, deadline: deadline)
                up.append(.stranger(opened.opening))
            case .success(let opened):
                let sender = opened.sender ?? ""
                state = .awaitingAnswer(responder, sender: sender, fingerprint: opened.fingerprint, deadline: deadline)
                up.append(.opened(sender: sender, senderKey: opened.key, opened.opening))
            case .failure(let refusal) where refusal.provesKey:
                // An unknown sender that asked for `notTrusted` (§8.7): message 2, which only this
                // receiver's key can write, says so; the connection then ends as after a refusal.
                var payload: [UInt8] = []
                HandshakePayload.encode([.hello(.notTrusted), .notTrusted], into: &payload)
                do { down.append(try responder.writeMessage2(payload: payload)) } catch { throw .handshake(error) }
                events.append(.refused(refusal.reason))
                state = .refusing(refusal.reason, deadline: now.advanced(by: refusalLinger))
            case .failure(let refusal):
                refuse(refusal.reason, now: now)
            }
        case .awaitingApproval(var codec, let waiting, let deadline):
            // The sender sends nothing until it has the answer: anything it sends is out of place.
            state = .busy
            defer { state = .awaitingApproval(codec, waiting, deadline: deadline) }
            throw .transfer(.unexpected(try codec.open(message).kind))
        case .established(var codec):
            state = .busy
            defer { state = .established(codec) }
            up.append(.message(try codec.open(message)))
            if !provedLive {
                provedLive = true
                signals.append(.peerProvedLive(at: now))
            }
        case .awaitingAnswer, .refusing, .busy:
            // Nothing is read before the answer is written, and nothing after a refusal.
            break
        }
    }

    mutating func send(_ unit: ReceiverUnit, now: Instant) throws(SessionError) {
        switch (state, unit) {
        case (.awaitingAnswer(var responder, let sender, let fingerprint, _), .answer(let answer)):
            state = .busy
            var payload: [UInt8] = []
            HandshakePayload.encode(answer, into: &payload)
            if answer.last?.kind == .busy {
                // Every slot is taken: message 2 says so, and the connection ends as after a refusal.
                do { down.append(try responder.writeMessage2(payload: payload)) } catch { throw .handshake(error) }
                stranger = nil
                let reason = SessionError.RefusalReason.toldBusy(sender: sender.isEmpty ? fingerprint : sender)
                events.append(.refused(reason))
                state = .refusing(reason, deadline: now.advanced(by: refusalLinger))
                return
            }
            do {
                down.append(try responder.writeMessage2(payload: payload))
                let keys = try responder.split()
                let codec = SecureMessageChannel(send: keys.responderToInitiator, receive: keys.initiatorToResponder,
                                                    rekeyAfter: rekeyAfter)
                if answer.contains(.pending), let waiting = stranger.take(), let key = PublicKey(bytes: waiting.key) {
                    let deadline = now.advanced(by: approvalTimeout)
                    state = .awaitingApproval(codec, waiting, deadline: deadline)
                    signals.append(.approvalPending(until: deadline))
                    let request = ApprovalRequest(key: key, code: PairingCode.from(handshakeHash: keys.handshakeHash),
                                                  offered: waiting.opening.last.flatMap(OfferedItem.init) ?? OfferedItem(kind: .file, name: "", size: nil))
                    events.append(.approvalNeeded(request))
                    return
                }
                state = .established(codec)
            } catch {
                throw .handshake(error)
            }
            signals.append(.peerAuthenticated)
            events.append(.authenticated(sender: sender, fingerprint: fingerprint))
        case (.awaitingAnswer(_, let sender, _, _), .refuse):
            refuse(.badOpening(sender: sender), now: now)
        case (.established(var codec), .message(let message)):
            state = .busy
            defer { state = .established(codec) }
            down.append(try codec.seal(message))
        case (.established(var codec), .answer(let answer)):
            // The answer to an approved stranger's opening: its `hello` went in message 2 already.
            state = .busy
            defer { state = .established(codec) }
            for message in answer where message.kind != .hello { down.append(try codec.seal(message)) }
        case (.established, .refuse):
            // The approved stranger's opening cannot be served after all (the transfer layer
            // judged it before message 2, so this does not happen): end the connection.
            throw .refusedSender(.badOpening(sender: "?"))
        default:
            break
        }
    }

    // MARK: - First contact

    /// The receiver's user accepted the unknown sender under `name`: it is trusted from now on (on
    /// this connection and, through the shared state, on every later handshake of any connection),
    /// and its opening goes up to be answered in a record. Returns the new peer, or nil if nobody
    /// was waiting.
    mutating func approve(name: String) -> TrustStore.Peer? {
        guard case .awaitingApproval(let codec, let waiting, _) = state, let key = PublicKey(bytes: waiting.key) else { return nil }
        let peer = TrustStore.Peer(name: name, key: key)
        judge.trust(peer, timestamp: waiting.timestamp)
        state = .established(codec)
        signals += [.approvalPending(until: nil), .peerAuthenticated]
        events.append(.authenticated(sender: name, fingerprint: waiting.fingerprint))
        up.append(.opened(sender: name, senderKey: waiting.key, waiting.opening))
        return peer
    }

    /// The receiver's user said no (or did not answer: `timedOut`): the opening is rejected with
    /// reason `notApproved` in a record, and the connection ends as after a refusal. Nothing is trusted.
    mutating func decline(timedOut: Bool, now: Instant) throws(SessionError) {
        guard case .awaitingApproval(var codec, let waiting, _) = state else { return }
        state = .busy
        if let id = waiting.opening.last.flatMap(Self.transferID) {
            do { down.append(try codec.seal(.reject(id: id, reason: .notApproved))) } catch {
                state = .awaitingApproval(codec, waiting, deadline: now)
                throw error
            }
        }
        let reason: SessionError.RefusalReason = timedOut ? .approvalTimedOut(fingerprint: waiting.fingerprint)
                                                           : .notApproved(fingerprint: waiting.fingerprint)
        events.append(.refused(reason))
        signals.append(.approvalPending(until: nil))
        state = .refusing(reason, deadline: now.advanced(by: refusalLinger))
    }

    /// The id a `reject` of `opening` carries (a commit's: its tree's).
    private static func transferID(of opening: TransferMessage) -> TransferID? {
        switch opening {
        case .offer(let offer): offer.id
        case .entry(let entry): entry.id
        case .folder(let id, _, _): id
        case .commit(let tree): tree
        default: nil
        }
    }

    mutating func nextUp() -> ReceiverUnit? { up.popFirst() }

    mutating func nextDown(now: Instant) -> [UInt8]? { down.popFirst() }

    mutating func handleTimers(now: Instant) throws(SessionError) {
        switch state {
        case .awaitingHello(_, let deadline) where now >= deadline, .awaitingAnswer(_, _, _, let deadline) where now >= deadline:
            throw .handshakeTimeout
        case .refusing(let reason, let deadline) where now >= deadline:
            throw .refusedSender(reason)
        case .awaitingApproval(_, _, let deadline) where now >= deadline:
            try decline(timedOut: true, now: now)
        default:
            break
        }
    }

    var nextDeadline: Instant? {
        switch state {
        case .awaitingHello(_, let deadline), .awaitingAnswer(_, _, _, let deadline), .refusing(_, let deadline),
             .awaitingApproval(_, _, let deadline): deadline
        case .established, .busy: nil
        }
    }

    var canSend: Bool {
        switch state {
        case .awaitingAnswer, .established: down.isEmpty
        case .awaitingHello, .awaitingApproval, .refusing, .busy: false
        }
    }

    /// One answer for every failure: the sender learns nothing about why.
    private mutating func refuse(_ reason: SessionError.RefusalReason, now: Instant) {
        events.append(.refused(reason))
        down.append(refusalMessage)
        state = .refusing(reason, deadline: now.advanced(by: refusalLinger))
    }
}

/// How long a receiver keeps a refused connection before closing it (time for the refusal to arrive).
let refusalLinger = Duration.seconds(2)
