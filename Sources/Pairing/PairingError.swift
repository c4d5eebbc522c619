/// Why a pairing step failed. Once a step has failed, its state machine is finished: every later
/// call throws `.outOfOrder`. The cases say no more than a user needs (a wrong code, an answer,
/// a broken message); which check inside a step failed is never told, to the peer or here.
public enum PairingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A message of the wrong length, a P1 without the mode byte, a name or static key that breaks
    /// the rules (`PairingName`, a zero or low-order X25519 key), a P4 that does not
    /// authenticate or says something else; also our own name, if it breaks the rules.
    case malformed
    /// The peer's first sealed message did not authenticate: P2 on the sender, P3 on the
    /// receiver. The usual cause is a code typed wrong; a man in the middle looks the same.
    case wrongCode
    /// The receiver answered P1 with `PairingLayout.refusedAnswer`: it is not pairing.
    case refused
    /// The receiver answered P1 with `PairingLayout.busyAnswer`: another pairing is open there.
    case busy
    /// A CPace share that is not a valid ristretto255 point, or that gives the identity element.
    case invalidShare
    /// A call in the wrong state, or any call after a failure.
    case outOfOrder
    /// The receiver could not write the proven sender's key (its own disk), so it sends no P4.
    case notPinned

    /// A stable name for logs, JSON events and tests: the case name.
    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .wrongCode: "wrongCode"
        case .refused: "refused"
        case .busy: "busy"
        case .invalidShare: "invalidShare"
        case .outOfOrder: "outOfOrder"
        case .notPinned: "notPinned"
        }
    }

    public var description: String { code }
}
