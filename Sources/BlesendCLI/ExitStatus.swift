/// The documented exit codes (README, man pages). One distinct code per kind of failure, so that
/// scripts can tell them apart.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// Something unexpected; the message says what.
    case failure = 1
    /// Wrong arguments or options.
    case usage = 64
    /// A key file is missing, malformed, or readable by others; a trust directory is unusable.
    case keyProblem = 65
    /// The peer refused us, or is not the peer we pinned (untrusted or mismatched key).
    case peerRefused = 66
    /// bluetoothd is not running, the system bus is unreachable, or there is no usable adapter; or
    /// (blesend) another program on this machine holds the receiver's transfer characteristic; or
    /// (`doctor`) a check the role needs failed.
    case bluetoothUnavailable = 67
    /// No receiver was found before `--timeout`.
    case peerNotFound = 68
    /// The link was lost and the transfer could not be resumed.
    case linkLost = 69
    /// Data failed authentication or the whole-file hash check.
    case integrity = 70
    /// A local file could not be read or written (disk full, permissions, missing file), or
    /// (blerecv) the output folder is one other users may write.
    case localIO = 71
    /// The receiver refused or could not store a file.
    case fileRejected = 72
    /// `--transport l2cap`, and the receiver offers no L2CAP channel or it did not open.
    case transportUnavailable = 73
    /// The receiver never answered the handshake until `--timeout` ran out (blesend kept trying):
    /// it is busy with another sender, or the device is not a blesend receiver. Try again later.
    case receiverBusy = 75
    /// The peer authenticated, then broke the protocol (a malformed or out-of-place message): a
    /// faulty or hostile implementation. Trying again would not help.
    case protocolViolation = 76
    /// `blerecv --private-discovery` on an adapter that advertises from its fixed address (LE
    /// privacy off), or whose privacy setting could not be read: its advertisements would be
    /// linked by the address whatever they carry.
    case addressNotPrivate = 78
    /// Pairing (`blesend pair`, `blerecv pair`) did not finish: a wrong code, no attempt in time,
    /// or the peer broke off. Nothing was pinned on this side.
    case notPaired = 79
    /// Stopped by SIGINT (Ctrl-C); partial files were removed.
    case interrupted = 130
    /// Stopped by SIGTERM (128 + 15), as `systemctl stop` and `kill` do; partial files were removed.
    case terminated = 143

    /// The stable name of the status: the `code` of a `--json` `error` event. Kebab-case, one per
    /// case, and kept within version 1 of docs/json-events.md (its table lists them all; a test
    /// reads that table). Written out rather than derived from the case's Swift name, so renaming
    /// a case cannot change what scripts match on.
    public var code: String {
        switch self {
        case .success: "success"
        case .failure: "failure"
        case .usage: "usage"
        case .keyProblem: "key-problem"
        case .peerRefused: "peer-refused"
        case .bluetoothUnavailable: "bluetooth-unavailable"
        case .peerNotFound: "peer-not-found"
        case .linkLost: "link-lost"
        case .integrity: "integrity"
        case .localIO: "local-io"
        case .fileRejected: "file-rejected"
        case .transportUnavailable: "transport-unavailable"
        case .receiverBusy: "receiver-busy"
        case .protocolViolation: "protocol-violation"
        case .addressNotPrivate: "address-not-private"
        case .notPaired: "not-paired"
        case .interrupted: "interrupted"
        case .terminated: "terminated"
        }
    }

    public var summary: String {
        switch self {
        case .success: "success"
        case .failure: "unexpected error"
        case .usage: "usage error"
        case .keyProblem: "key file problem"
        case .peerRefused: "untrusted or mismatched peer"
        case .bluetoothUnavailable: "no adapter, or bluetoothd unreachable"
        case .peerNotFound: "peer not found"
        case .linkLost: "link lost and not resumable"
        case .integrity: "integrity failure"
        case .localIO: "local I/O failure"
        case .fileRejected: "file rejected by the receiver"
        case .transportUnavailable: "the chosen transport is not available"
        case .receiverBusy: "receiver busy or not answering"
        case .protocolViolation: "the peer broke the protocol"
        case .addressNotPrivate: "private discovery needs LE privacy"
        case .notPaired: "pairing did not finish; nothing pinned"
        case .interrupted: "interrupted (SIGINT)"
        case .terminated: "terminated (SIGTERM)"
        }
    }
}

/// An error the user sees: what happened, what to do next, and the exit status.
public struct CLIError: Error, Sendable {
    public var status: ExitStatus
    public var message: String
    public var hint: String?

    public init(_ status: ExitStatus, _ message: String, hint: String? = nil) {
        self.status = status
        self.message = message
        self.hint = hint
    }
}
