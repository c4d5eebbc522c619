/// The documented exit codes: one distinct code per kind of failure, so that scripts can tell
/// them apart. `summary` and `documentation` are the single source of the man pages' EXIT STATUS
/// section (ManualSections) and of the README's table.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case failure = 1
    case usage = 64
    case keyProblem = 65
    case peerRefused = 66
    case bluetoothUnavailable = 67
    case peerNotFound = 68
    case linkLost = 69
    case integrity = 70
    case localIO = 71
    case fileRejected = 72
    case transportUnavailable = 73
    case receiverBusy = 75
    case protocolViolation = 76
    case addressNotPrivate = 78
    case notPaired = 79
    /// SIGHUP on a terminal (128 + 1). Off a terminal blerecv reloads its trust on SIGHUP instead.
    case hungUp = 129
    /// SIGINT (128 + 2).
    case interrupted = 130
    /// SIGTERM (128 + 15): `systemctl stop`, `kill`.
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
        case .hungUp: "hung-up"
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
        case .hungUp: "the terminal went away (SIGHUP)"
        case .interrupted: "interrupted (SIGINT, Ctrl-C)"
        case .terminated: "terminated (SIGTERM)"
        }
    }

    /// What the code means, in full: one sentence or two for the man pages and the README.
    public var documentation: String {
        switch self {
        case .success: "Everything asked for was done."
        case .failure: "Something unexpected; the message says what."
        case .usage: "Wrong arguments or options, or an unknown command."
        case .keyProblem: "A key file is missing, malformed, or readable by others; a trust directory is unusable."
        case .peerRefused: "The peer refused us, or is not the peer we pinned (untrusted or mismatched key), or its user did not accept our key at first contact."
        case .bluetoothUnavailable:
            "bluetoothd is not running, the system bus is unreachable, or there is no usable adapter; or (blesend) another program on this machine holds the receiver's transfer characteristic; or (doctor) a check the role needs failed."
        case .peerNotFound: "No receiver was found before --timeout."
        case .linkLost: "The link was lost and the transfer could not be resumed."
        case .integrity: "Data failed authentication or the whole-file hash check; nothing of it was saved."
        case .localIO: "A local file could not be read or written (disk full, permissions, missing file), or (blerecv) the output folder is one other users may write."
        case .fileRejected: "The receiver refused or could not store a file."
        case .transportUnavailable: "--transport l2cap, and the receiver offers no L2CAP channel or it did not open."
        case .receiverBusy:
            "The receiver never answered the handshake until --timeout ran out (blesend kept trying): it is busy with another sender, or the device is not a blesend receiver. Try again later."
        case .protocolViolation: "The peer authenticated, then broke the protocol (a malformed or out-of-place message): a faulty or hostile implementation. Trying again would not help."
        case .addressNotPrivate:
            "blerecv --private-discovery on an adapter that advertises from its fixed address (LE privacy off), or whose privacy setting could not be read."
        case .notPaired: "Pairing (blesend pair, blerecv pair) did not finish: a wrong code, no attempt in time, or the peer broke off. Nothing was pinned on this side."
        case .hungUp:
            "The terminal went away (SIGHUP while run from a terminal); cleaned up as for 130. Off a terminal blerecv does not exit on SIGHUP: it reads its trust directory again (systemctl reload blerecv)."
        case .interrupted:
            "Stopped by SIGINT (Ctrl-C). blerecv keeps partial files for a resume (--keep-partials, 168 hours by default; --keep-partials 0 removes them); blesend keeps what it needs to resume when run again with the same files."
        case .terminated: "Stopped by SIGTERM (systemctl stop, kill); cleaned up as for 130."
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
