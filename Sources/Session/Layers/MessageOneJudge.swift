import Handshake
import Keys
import Pipeline
import Transfer

/// The receiver's judgement of message 1 (decryption, trust, the opening, the timestamp), against
/// the trust store and the handshake replay guard of the receiver's shared state: what one
/// connection's judge trusts or remembers, every other connection's judge sees.
struct MessageOneJudge {
    private let shared: ReceiverSharedState
    /// What the receiver grants that changes how it answers an unknown sender that asks for it:
    /// `firstContact`, `pending` instead of a refusal (§8.5); `notTrusted`, a message 2 that says
    /// so instead of the one-byte refusal (§8.7).
    private let grants: TransferExtensions
    /// The wall clock (nanoseconds since the Unix epoch) when the connection was accepted, and
    /// the monotonic instant that goes with it: message 1's timestamp is checked against them.
    private let acceptedAt: (wallClock: UInt64, now: Instant)

    init(shared: ReceiverSharedState, grants: TransferExtensions, acceptedAt: (wallClock: UInt64, now: Instant)) {
        self.shared = shared
        self.grants = grants.intersection([.firstContact, .notTrusted])
        self.acceptedAt = acceptedAt
    }

    /// The receiver's user accepted a stranger: its key is trusted, and its message 1 timestamp
    /// remembered (it was not while it was a stranger).
    mutating func trust(_ peer: TrustStore.Peer, timestamp: UInt64) {
        shared.trust(peer)
        if shared.replayGuard.accept(timestamp: timestamp, from: peer.key.bytes) {
            // The user has accepted; message 2 was written before the question. Kept if it can be.
            try? shared.replayMemory?.remember(key: peer.key.bytes, timestamp: timestamp)
        }
    }

    struct Opened {
        /// nil for an unknown sender that asked for `firstContact` from a receiver that asks.
        let sender: String?
        let key: [UInt8]
        let fingerprint: String
        let timestamp: UInt64
        let opening: [TransferMessage]
    }

    struct Refusal: Error {
        let reason: SessionError.RefusalReason
        /// Answer with `notTrusted` in message 2 rather than the one-byte refusal (§8.7).
        var provesKey = false
    }

    /// Judges message 1: the sender it authenticates, or why to refuse.
    mutating func judge(_ message: [UInt8], responder: inout NoiseIKResponder, now: Instant) -> Result<Opened, Refusal> {
        let remoteStatic: [UInt8], payload: [UInt8]
        do {
            (remoteStatic, payload) = try responder.readMessage1(message)
        } catch {
            return .failure(Refusal(reason: .malformedHandshake))
        }
        let fingerprint = PublicKey(bytes: remoteStatic)?.fingerprint ?? "?"
        let sender = shared.trust.name(for: remoteStatic)
        let unknown = Refusal(reason: .unknownSender(fingerprint: fingerprint))
        guard sender != nil || !grants.isEmpty else { return .failure(unknown) }
        // Only a well-formed offer (after a `hello`, if any) opens a connection; judged before the
        // timestamp is remembered.
        var reader = ByteReader(payload)
        guard let timestamp = try? reader.readUInt64(),
              let opening = try? HandshakePayload.decode(reader.readRest()), Self.opens(opening) else {
            return .failure(sender.map { Refusal(reason: .badOpening(sender: $0)) } ?? unknown)
        }
        // An unknown sender gets as far as the user only if it asked for that where the user is
        // asked; else it is refused: told `notTrusted` if it asked for that where it is granted
        // (§8.7), without a word otherwise (an older sender, as before).
        if sender == nil, !offers(.firstContact, to: opening) {
            return .failure(Refusal(reason: unknown.reason, provesKey: offers(.notTrusted, to: opening)))
        }
        let named = sender ?? fingerprint
        let wallClock = acceptedAt.wallClock &+ UInt64(max(0, now.duration(since: acceptedAt.now).nanoseconds))
        // A stranger's timestamp is remembered only once its key is trusted (`approve`): a stream of
        // fresh stranger keys must not push trusted senders out of the guard.
        switch shared.replayGuard.judge(timestamp: timestamp, from: remoteStatic, wallClock: wallClock, remember: sender != nil) {
        case .fresh:
            // Durable before message 2 goes out: a recording of this message 1 stays a replay
            // after a restart. A stranger's is remembered once its key is trusted (`trust`).
            if sender != nil, let memory = shared.replayMemory {
                do {
                    try memory.remember(key: remoteStatic, timestamp: timestamp)
                } catch {
                    return .failure(Refusal(reason: .replayGuardNotSaved(sender: named, failure: error)))
                }
            }
            return .success(Opened(sender: sender, key: remoteStatic, fingerprint: fingerprint, timestamp: timestamp, opening: opening))
        case .replayed:
            return .failure(Refusal(reason: .replayedHandshake(sender: named)))
        case .ahead(let nanoseconds):
            return .failure(Refusal(reason: .clockAhead(sender: named, seconds: nanoseconds / 1_000_000_000)))
        }
    }

    /// Whether the receiver grants `extension` and the opening's `hello` asks for it.
    private func offers(_ extension: TransferExtensions, to opening: [TransferMessage]) -> Bool {
        guard grants.contains(`extension`), case .hello(let asked) = opening.first else { return false }
        return asked.contains(`extension`)
    }

    /// Whether `messages` can open a connection: an offer, or after a `hello` an offer or an item
    /// of a folder (which the transfer layer takes only where `folders` is granted).
    private static func opens(_ messages: [TransferMessage]) -> Bool {
        switch (messages.count, messages.first?.kind, messages.last?.kind) {
        case (1, .offer, _): true
        case (2, .hello, .offer), (2, .hello, .entry), (2, .hello, .folder), (2, .hello, .commit): true
        default: false
        }
    }
}
