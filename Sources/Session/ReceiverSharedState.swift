import Handshake
import Keys
import Transfer

/// What a receiver keeps beyond one connection, shared by the sessions of every connection it
/// serves at the same time (`ReceiverSession.sharingState()`): the trust store and the handshake
/// replay guard, which its `MessageOneJudge`s read and write, and the transfer ledger (partial
/// files, folders, completed transfers), which its `TransferReceiver`s use.
///
/// A reference so that a sender approved on one connection is trusted on the next handshake of
/// any other, and a message 1 accepted on one is a replay on all of them. Confined to one thread,
/// the receiver's pump: not `Sendable`, no lock; every session sharing it must be driven there.
final class ReceiverSharedState {
    private(set) var trust: TrustStore
    var replayGuard: HandshakeReplayGuard
    /// Where accepted message 1 timestamps are kept across restarts (nil: in memory only).
    let replayMemory: (any ReplayMemory)?
    let ledger: ReceiverLedger

    init(trust: TrustStore, ledger: ReceiverLedger, replayMemory: (any ReplayMemory)? = nil) {
        self.trust = trust
        self.ledger = ledger
        self.replayMemory = replayMemory
        replayGuard = HandshakeReplayGuard(recalled: replayMemory?.recalled ?? [])
    }

    /// Judges the next handshakes against `store` (the trust directory was read again).
    func replaceTrust(_ store: TrustStore) {
        trust = store
    }

    /// Trusts `peer` from the next handshake on, unless its key is trusted already (under the
    /// name it has: two connections may approve the same stranger).
    func trust(_ peer: TrustStore.Peer) {
        guard trust.name(for: peer.key.bytes) == nil else { return }
        trust.insert(peer)
    }
}
