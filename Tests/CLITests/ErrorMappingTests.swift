@testable import BlesendCLI
import DBus
import BlueZ
import Keys
import Session
import Storage
import Testing
import Transfer
import Pipeline

// The same failed file reads differently on each side: the sender was refused (72), the receiver
// could not write (71, local I/O, as `blerecv --help` documents). Found by the lab's disk-full case.
@Test func aFileThatCouldNotBeStoredIsLocalIOOnTheReceiverAndRefusedOnTheSender() {
    let failure = FileFailure.couldNotStore(StorageError(.noSpace, "cannot write a.bin: No space left on device"))
    let receiver = CLIError(receiving: failure, name: "a.bin from alice")
    #expect(receiver.status == .localIO)
    #expect(receiver.message.contains("No space left on device"))
    #expect(receiver.hint == CLIError.noSpaceHint, "the disk-full hint, as for a full output folder at start")
    #expect(CLIError(receiving: .couldNotStore(StorageError(.notWritable, "x")), name: "a.bin").hint?.contains("permissions") == true)
    #expect(CLIError(.receiverCouldNotStore, name: "a.bin").status == .fileRejected)
    #expect(CLIError(failure, name: "a.bin").status == .fileRejected)
    // Everything else keeps the shared mapping.
    #expect(CLIError(receiving: .integrity, name: "a.bin").status == .integrity)
    #expect(CLIError(receiving: .rejected(.tooLarge), name: "a.bin").status == .fileRejected)
}

// Another program on the sender's machine holding the receiver's characteristic is a local
// Bluetooth problem (67) with a cause the user can act on, not a lost link (issue 9, defect 6).
@Test func aCharacteristicHeldByAnotherLocalProgramIsBluetoothUnavailable() {
    let error = CLIError(BlueZError.characteristicBusy(DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "Write acquired")), adapter: "hci1")
    #expect(error.status == .bluetoothUnavailable)
    #expect(error.message.contains("another program on this machine holds"))
    #expect(error.message.contains("Write acquired"))
    #expect(error.hint != nil)
}

// A user the system bus keeps from bluetoothd hears about the bluetooth group (the same fix
// `doctor` gives), not a bare D-Bus error.
@Test func theBusRefusingUsIsBluetoothUnavailableWithTheGroupHint() {
    let error = CLIError(BlueZError.accessDenied(DBusRemoteError(name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message")), adapter: nil)
    #expect(error.status == .bluetoothUnavailable)
    #expect(error.message.contains("Rejected send message"))
    #expect(error.hint?.contains("sudo usermod -aG bluetooth $USER") == true)
}

// A D-Bus failure never reaches the user as the library's words: a timeout says bluetoothd did not
// answer, anything else names bluetoothd and what to do (issue 20: `D-Bus error: timeout` after a
// killed sender, `D-Bus error: remote(…Spawn.ChildExited…)` after bluetoothd went away).
@Test func dbusFailuresSayWhatHappenedToBluetoothd() {
    let timeout = CLIError(BlueZError.dbus(.timeout), adapter: nil)
    #expect(timeout.status == .bluetoothUnavailable)
    #expect(timeout.message == "bluetoothd did not answer in time")
    #expect(timeout.hint?.contains("systemctl restart bluetooth") == true)
    let other = CLIError(BlueZError.dbus(.outOfMemory), adapter: nil)
    #expect(!other.message.hasPrefix("D-Bus error"))
    #expect(other.message.contains("bluetoothd"))
    #expect(other.hint != nil)
}

// Issue 20: an output folder others may write is refused at start as local I/O (71), with the fix;
// a trust directory others may write is a key problem (65), which systemd does not restart on.
@Test func unsafeFoldersMapToTheirExitStatuses() {
    let folder = CLIError(OutputFolderError(.writableByOthers, path: "/srv/in", mode: 0o777, "/srv/in: everyone may write it"))
    #expect(folder.status == .localIO)
    #expect(folder.message.contains("refusing to receive into /srv/in"))
    #expect(folder.hint?.contains("chmod go-w /srv/in") == true)
    let anyError: any Error = OutputFolderError(.writableByOthers, path: "/srv/in", mode: 0o777, "x")
    #expect(CLIError(anyError).status == .localIO)
    #expect(CLIError(KeyError(.writableByOthers, "trust directory k: everyone can write it")).status == .keyProblem)
}

// The bus that cannot be reached says libdbus's words, not a Swift value (issue 21).
@Test func anUnreachableBusSaysLibdbussWords() {
    let cause = DBusError.connectionFailed(DBusRemoteError(
        name: "org.freedesktop.DBus.Error.FileNotFound", message: "Failed to connect to socket /x: No such file or directory"))
    let error = CLIError(BlueZError.busUnavailable(cause), adapter: nil)
    #expect(error.status == .bluetoothUnavailable)
    #expect(error.message == "cannot reach the D-Bus system bus: Failed to connect to socket /x: No such file or directory")
}

// Issue 31, item 5: no enum dump reaches a person. bluetoothd's own refusal comes with where to
// look; a nested cause is named by its stable code; an error of a type no mapping knows is named
// by its type, never by a dump of its payload.
@Test func errorsReachPeopleAsWordsNotDumps() {
    let refused = CLIError(BlueZError.bluez(DBusRemoteError(name: "org.bluez.Error.InProgress", message: "In Progress")), adapter: nil)
    #expect(refused.hint?.contains("blesend doctor") == true)
    let record = CLIError(SessionError.record(.authenticationFailed))
    #expect(record.message.contains("(authenticationFailed)"))
    struct Unmapped: Error { let secret = "payload-123" }
    let other = CLIError(Unmapped() as any Error)
    #expect(other.status == .failure)
    #expect(!other.message.contains("payload-123"))
    #expect(other.message.contains("Unmapped"))
}
