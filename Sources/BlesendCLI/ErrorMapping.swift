import BlueZ
import Keys
import Pairing
import Session
import Storage
import Transfer
import Pipeline

/// Turns errors from the layers into what the user reads, with a hint and an exit status.
extension CLIError {
    /// For `catch` blocks whose error type the compiler cannot narrow.
    init(_ error: any Error) {
        switch error {
        case let e as CLIError: self = e
        case let e as KeyError: self.init(e)
        case let e as StorageError: self.init(e)
        case let e as OutputFolderError: self.init(e)
        case let e as SessionError: self.init(e)
        case let e as BlueZError: self.init(e, adapter: nil)
        // Never a dump of the value (its payload may be anything): its type names it for a report.
        default: self.init(.failure, "an unexpected error (\(type(of: error)))", hint: "run again with -v; if it repeats, report it with that output")
        }
    }

    init(_ error: KeyError) {
        self.init(.keyProblem, error.message, hint: error.hint)
    }

    init(_ error: StorageError) {
        self.init(.localIO, error.detail, hint: error.code == .noSpace ? Self.noSpaceHint : nil)
    }

    static let noSpaceHint = "free some space, or receive into another folder with --out"

    init(_ error: OutputFolderError) {
        self.init(.localIO, "refusing to receive into \(error.detail)",
                  hint: "receive into a folder only you can write (chmod go-w \(error.path)), or pick another with --out")
    }

    init(_ error: BlueZError, adapter: String?, timeout: Duration? = nil) {
        switch error {
        case .bluetoothdNotRunning:
            self.init(.bluetoothUnavailable, "bluetoothd is not running (no org.bluez on the system bus)",
                      hint: "start it with: systemctl start bluetooth")
        case .busUnavailable(let cause):
            self.init(.bluetoothUnavailable, "cannot reach the D-Bus system bus: \(cause)",
                      hint: "is dbus running? DBUS_SYSTEM_BUS_ADDRESS can point elsewhere")
        case .accessDenied(let refusal):
            self.init(.bluetoothUnavailable, "the system bus does not let this user talk to bluetoothd (\(refusal.message))",
                      hint: SetupFix.joinBluetoothGroup)
        case .noAdapter(let name):
            self.init(.bluetoothUnavailable, name.map { "no Bluetooth adapter called \($0)" } ?? "no Bluetooth adapter found",
                      hint: "list adapters with: bluetoothctl list   (then pass --adapter hciN)")
        case .adapterPoweredOff(let name):
            self.init(.bluetoothUnavailable, "the Bluetooth adapter \(name.map { $0 + " " } ?? "")is powered off",
                      hint: "power it on with: bluetoothctl power on   (and check rfkill list)")
        case .notFound:
            let wait = timeout.map { " within \(Self.seconds($0)) s" } ?? ""
            self.init(.peerNotFound, "no receiver found\(wait)",
                      hint: "is blerecv running nearby? Move closer, lower --min-rssi, or raise --timeout")
        case .notListed:
            self.init(.peerRefused, "a blesend receiver is nearby but does not list your key: it does not trust you, or it is not the one you pinned",
                      hint: "give the receiver your public key (blesend pubkey) to add with blerecv trust, and check --to")
        case .timeout(let what):
            self.init(.linkLost, "the receiver did not answer in time (\(what))", hint: "move closer and try again")
        case .linkLost:
            self.init(.linkLost, "the Bluetooth link was lost", hint: "move closer and send again; the transfer resumes")
        case .characteristicMissing:
            self.init(.peerRefused, "the device advertises the service but has no blesend transfer characteristic",
                      hint: "it may run another version of blesend")
        case .characteristicBusy(let refusal):
            self.init(.bluetoothUnavailable,
                      "another program on this machine holds the receiver's transfer characteristic (bluetoothd: \(refusal.message))",
                      hint: "stop the other program (another blesend?) and send again")
        case .l2capNotOffered:
            self.init(.transportUnavailable, "the receiver offers no L2CAP channel (an older blerecv, or one started with --no-l2cap, or its kernel has none)",
                      hint: "send with --transport auto (the default) or gatt")
        case .l2cap(let cause):
            self.init(.transportUnavailable, "the receiver's L2CAP channel did not open (\(cause))",
                      hint: "send with --transport auto (the default) to fall back to GATT")
        case .bluez(let remote):
            self.init(.bluetoothUnavailable, "BlueZ refused: \(remote.name): \(remote.message)",
                      hint: "check the adapter with blesend doctor; bluetoothd's log may say more: journalctl -u bluetooth")
        case .dbus(.timeout):
            self.init(.bluetoothUnavailable, "bluetoothd did not answer in time",
                      hint: "it may be stuck: check with blesend doctor, or restart it with: systemctl restart bluetooth")
        case .dbus(let dbus):
            self.init(.bluetoothUnavailable, "talking to bluetoothd over the system bus failed (\(dbus))",
                      hint: "check with blesend doctor; if bluetoothd stopped, start it with: systemctl start bluetooth")
        }
    }

    init(_ error: SessionError) {
        switch error {
        case .refusedByPeer:
            self.init(.peerRefused, "the receiver refused the connection",
                      hint: "the receiver must trust your key (blerecv trust <your .pub>), and --to must be the receiver's key")
        case .notTrustedByPeer:
            self.init(.peerRefused, "the receiver refused the connection: it proved it holds the key you pinned, and it does not trust your key",
                      hint: "ask its user to trust your key (blerecv trust <your .pub>; blesend pubkey shows it), or to run blerecv --ask")
        case .notApprovedByPeer:
            self.init(.peerRefused, "the receiver's user did not accept your key (they said no, or did not answer in time)",
                      hint: "ask them to run blerecv --ask again and to type the code blesend shows, or to trust your key (blerecv trust); a sender refused at first contact is refused without a question for a while (30 s, doubling)")
        case .approvalTimeout:
            self.init(.peerRefused, "the receiver's user did not answer about your key in time",
                      hint: "send again while they watch the receiver's screen")
        case .peerNotAuthenticated:
            self.init(.peerRefused, "the device that answered is not the receiver you pinned with --to",
                      hint: "check the receiver's key and fingerprint (blesend pubkey on the receiver)")
        case .refusedSender:
            self.init(.peerRefused, "a sender was refused")
        case .receiverBusy:
            self.init(.receiverBusy, "the receiver is busy with other senders", hint: "try again later, or raise --timeout to wait longer")
        case .handshakeTimeout:
            self.init(.linkLost, "the handshake did not finish in time")
        case .record(let cause):
            self.init(.integrity, "a record failed authentication (\(cause.code)): the data was damaged or tampered with",
                      hint: "someone may be interfering; try again")
        case .linkLost:
            self.init(.linkLost, "the Bluetooth link was lost")
        case .framing(let cause):
            self.init(.protocolViolation, "the peer broke the framing rules (\(cause))")
        case .handshake(let cause):
            self.init(.failure, "cannot run the handshake (\(cause.code)); is the key file intact?")
        case .transfer(.sourceFailed(let error)):
            self.init(.localIO, error.description)
        case .transfer(let cause):
            // Only an authenticated receiver can have said this (the sender's view).
            self.init(.protocolViolation, "the receiver broke the protocol: \(cause); stopped without sending more",
                      hint: "the receiver runs a faulty or incompatible implementation; files it confirmed are saved")
        case .pairing(let cause):
            self.init(cause)
        }
    }

    /// Pairing's failures, each said so that nobody takes the pairing for done: nothing was pinned.
    init(_ error: PairingError) {
        switch error {
        case .wrongCode:
            self.init(.notPaired, "the code did not match: nothing was pinned on either machine",
                      hint: "blerecv pair shows a new code after a failed attempt: run blesend pair again and type that one")
        case .busy:
            self.init(.receiverBusy, "the receiver is pairing with another sender right now; nothing was pinned",
                      hint: "try again in a minute")
        case .refused:
            self.init(.peerRefused, "that receiver is not pairing; nothing was pinned",
                      hint: "run `blerecv pair` on the receiving machine first, then blesend pair here")
        case .notPinned:
            self.init(.localIO, "the peer's key could not be written; the pairing did not finish")
        case .malformed, .invalidShare, .outOfOrder:
            self.init(.notPaired, "the other side broke the pairing rules (\(error.code)); nothing was pinned",
                      hint: "if this repeats, a device nearby may be interfering: pair again, close together")
        }
    }

    init(_ failure: FileFailure, name: String) {
        switch failure {
        case .integrity:
            self.init(.integrity, "\(name): the received bytes did not match the sender's hash; nothing was saved",
                      hint: "send it again")
        case .tampered:
            self.init(.integrity, "\(name): a record failed authentication (tampered with or damaged on the way); nothing was saved",
                      hint: "someone may be interfering; send it again")
        case .senderBrokeProtocol(let cause):
            self.init(.protocolViolation, "\(name): the sender broke the protocol: \(cause); nothing was saved",
                      hint: "the sender runs a faulty or incompatible implementation")
        case .couldNotStore(let error):
            self.init(.fileRejected, "\(name): the receiver could not store it (\(error.detail))")
        case .receiverCouldNotStore:
            self.init(.fileRejected, "\(name): the receiver could not store it")
        case .rejected(let reason):
            let why = switch reason {
            case .tooLarge: "too large for the receiver"
            case .couldNotStore: "the receiver could not store it"
            case .badName: "its name is not usable"
            case .exists: "that path is already taken in its folder"
            case .noFolder: "its folder was refused"
            case .notApproved: "the receiver's user did not accept your key"
            }
            self.init(.fileRejected, "\(name): refused by the receiver: \(why)")
        case .foldersNotSupported:
            self.init(.fileRejected, "\(name): the receiver does not take folders; nothing of it was sent",
                      hint: "the receiver runs an older blesend: update it, or send the files one by one")
        }
    }

    /// The receiver's own view of a file it failed: not storing it is a local I/O failure there (71),
    /// while the sender reports the same event as "refused by the receiver" (72).
    init(receiving failure: FileFailure, name: String) {
        switch failure {
        case .couldNotStore(let error):
            self.init(.localIO, "\(name): could not store it: \(error.detail); nothing was kept",
                      hint: error.code == .noSpace ? Self.noSpaceHint : "check the space and permissions of the output folder")
        default:
            self.init(failure, name: name)
        }
    }

    /// "30" or "2.5": whole seconds without a fraction.
    static func seconds(_ duration: Duration) -> String {
        let value = duration.seconds
        return value == value.rounded() ? String(Int(value)) : Formatting.oneDecimal(value)
    }
}
