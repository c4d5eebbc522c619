import Framing
import Handshake
import Pairing
import Record
import Transfer
import Pipeline

/// Why a connection (or the whole session) ended badly. Each maps to one exit code in the CLI.
public enum SessionError: Error, Equatable, Sendable {
    /// The receiver answered our handshake with a refusal: it does not trust our key, or the key
    /// we pinned for it is wrong. (By design it does not say which.)
    case refusedByPeer
    /// The receiver asked its user about our key (first contact, `--ask`) and the user said no,
    /// or did not answer in time.
    case notApprovedByPeer
    /// The receiver asked its user about our key and no answer came within our own limit.
    case approvalTimeout
    /// The receiver proved its key and said it does not trust ours (`notTrusted`,
    /// docs/protocol.md §8.7): the receiver we pinned refused us, no other device.
    case notTrustedByPeer
    /// The receiver proved its key and said it serves as many senders as it takes (`busy`,
    /// docs/protocol.md §8.6): come back after about `retryAfter`; `ahead` senders wait before us.
    case receiverBusy(retryAfter: Duration, ahead: Int)
    /// The peer's handshake answer did not authenticate: it is not the receiver we pinned.
    case peerNotAuthenticated
    /// A sender tried to connect but was refused (receiver side; `reason` is for the local log only).
    case refusedSender(RefusalReason)
    /// The handshake did not finish in time.
    case handshakeTimeout
    /// A record failed authentication or broke the record rules: tampering or corruption (or,
    /// sealing, a counter that ran out).
    case record(RecordError)
    /// The link is gone or stopped making progress.
    case linkLost
    /// The peer broke the framing rules (frames are not authenticated: anyone in range can do this).
    case framing(LinkError)
    /// Our own handshake could not start or answer (a bad local key).
    case handshake(HandshakeError)
    /// The transfer layer stopped: the authenticated peer broke its rules, or a local file failed.
    case transfer(TransferError)
    /// Pairing (`blesend pair`, `blerecv pair`, docs/protocol.md §9) failed: a wrong code, a
    /// receiver that is not pairing or is busy, a peer that broke the rules. Nothing was pinned.
    case pairing(PairingError)

    public enum RefusalReason: Equatable, Sendable {
        case malformedHandshake
        case unknownSender(fingerprint: String)
        case replayedHandshake(sender: String)
        /// Message 1's timestamp is more than `maxTimestampAhead` past the receiver's clock.
        case clockAhead(sender: String, seconds: UInt64)
        case badOpening(sender: String)
        /// First contact (`--ask`): the user said no to this unknown sender.
        case notApproved(fingerprint: String)
        /// First contact (`--ask`): the user did not answer about this unknown sender in time.
        case approvalTimedOut(fingerprint: String)
        /// Not a refusal of the sender: every slot was taken, and the trusted sender was told
        /// `busy` (docs/protocol.md §8.6). The connection ends as after a refusal.
        case toldBusy(sender: String)
        /// The sender's message 1 was good, but the receiver could not make its timestamp durable
        /// (`ReplayMemory`): without that, a recording of it could be replayed after a restart.
        case replayGuardNotSaved(sender: String, failure: StorageError)
    }
}

extension SessionError {
    /// Whether a sender should reconnect and resume after this error; the others end the session.
    /// What an authenticated peer said (`transfer`) is never worth a retry: it would say it again.
    public var isRecoverable: Bool {
        switch self {
        case .linkLost, .handshakeTimeout, .record, .framing: true
        // A busy receiver is worth coming back to, but when it says: `ReconnectPolicy`'s call.
        case .refusedByPeer, .notApprovedByPeer, .notTrustedByPeer, .approvalTimeout, .peerNotAuthenticated, .refusedSender, .handshake, .transfer,
             .receiverBusy, .pairing: false
        }
    }

    init(_ error: LinkError) {
        switch error {
        case .linkDead: self = .linkLost
        default: self = .framing(error)
        }
    }
}
