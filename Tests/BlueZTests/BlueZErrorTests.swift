import DBus
import Testing
@testable import BlueZ

/// bluetoothd 5.66's answers (src/gatt-client.c) when another client on this machine already
/// holds the peer characteristic's socket, and what they become (issue 9, defect 6).
@Suite("BlueZ errors")
struct BlueZErrorTests {
    func refusal(_ name: String, _ message: String) -> BlueZError {
        BlueZError.from(.remote(DBusRemoteError(name: DBusErrorName(name), message: message)))
    }

    @Test func anotherClientsSocketMakesTheCharacteristicBusy() {
        for reason in ["Write acquired", "Notify acquired"] {
            let busy = BlueZError.acquireRefused(refusal("org.bluez.Error.NotPermitted", reason))
            #expect(busy == .characteristicBusy(DBusRemoteError(name: .bluezNotPermitted, message: "")))
            guard case .characteristicBusy(let cause) = busy else { continue }
            #expect(cause.message == reason, "bluetoothd's reason is kept for the user")
        }
    }

    @Test func otherRefusalsKeepTheirMeaning() {
        let failed = refusal("org.bluez.Error.Failed", "Operation failed")
        #expect(BlueZError.acquireRefused(failed) == failed)
        let inProgress = refusal("org.bluez.Error.InProgress", "In Progress")
        #expect(BlueZError.acquireRefused(inProgress) == inProgress)
        #expect(BlueZError.acquireRefused(.linkLost) == .linkLost)
        #expect(BlueZError.acquireRefused(refusal("org.freedesktop.DBus.Error.ServiceUnknown", "")) == .bluetoothdNotRunning)
    }
}

/// bluetoothd's answers on a peer whose link has just ended are a lost link (the sender connects
/// again), whichever of its two spellings comes; another `Failed` stays bluetoothd's error.
@Test func aCallOnAPeerWhoseLinkEndedIsALostLink() {
    #expect(BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.Failed", message: "Not connected"))) == .linkLost)
    #expect(BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.NotConnected", message: "Not Connected"))) == .linkLost)
    let other = BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.Failed", message: "Not supported")))
    #expect(other == .bluez(DBusRemoteError(name: .bluezFailed, message: "")))
}

/// The bus's own refusal (its policy keeps this user from bluetoothd) is told apart from
/// bluetoothd's errors, so that the user hears about the bluetooth group, not a D-Bus error.
@Test func theBusRefusingACallIsAccessDenied() {
    let denied = BlueZError.from(.remote(DBusRemoteError(
        name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message, 2 matched rules")))
    #expect(denied == .accessDenied(DBusRemoteError(name: .accessDenied, message: "")))
    if case .accessDenied(let cause) = denied { #expect(cause.message == "Rejected send message, 2 matched rules") }
    #expect(BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.NotPermitted", message: "x")))
        != .accessDenied(DBusRemoteError(name: .accessDenied, message: "x")))
}

/// A `Device1.Connect` that failed in a way another scan can mend (`GattCentral` then scans and
/// tries again): bluetoothd waited for a connectable advertisement that never came, it removed
/// the device's object between the scan and `Connect`, or the link was aborted before it was up.
/// Anything else is not retried.
@Test func connectFailuresAnotherScanCanMendAreToldApart() {
    let vanished = BlueZError.from(.remote(DBusRemoteError(
        name: "org.freedesktop.DBus.Error.UnknownObject", message: "Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" doesn't exist")))
    #expect(ConnectAttemptFailure(vanished) == .deviceVanished)
    #expect(ConnectAttemptFailure(.bluez(DBusRemoteError(name: "org.bluez.Error.DoesNotExist", message: ""))) == .deviceVanished)
    #expect(ConnectAttemptFailure(.dbus(.timeout)) == .noConnectableAdvertisement)
    let aborted = DBusRemoteError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
    #expect(ConnectAttemptFailure(.bluez(aborted)) == .notEstablished(aborted))
    #expect(ConnectAttemptFailure.notEstablished(aborted).error == .bluez(aborted))
    // The kernel would not start the connection; the link went down while it was set up.
    for message in ["Input/output error", "le-connection-create-socket", "br-connection-canceled", "le-connection-abort-by-remote"] {
        let reply = DBusRemoteError(name: "org.bluez.Error.Failed", message: message)
        #expect(ConnectAttemptFailure(.bluez(reply)) == .notEstablished(reply), "\(message)")
    }
    #expect(ConnectAttemptFailure(.bluez(DBusRemoteError(name: "org.bluez.Error.Failed", message: "le-connection-key-missing"))) == nil)
    #expect(ConnectAttemptFailure(.bluez(DBusRemoteError(name: "org.bluez.Error.NotReady", message: "le-connection-abort-by-local"))) == nil)
    #expect(ConnectAttemptFailure(.adapterPoweredOff("/org/bluez/hci1")) == nil)
    #expect(ConnectAttemptFailure(.linkLost) == nil)
    // What the sender reports when the last attempt failed so.
    #expect(ConnectAttemptFailure.noConnectableAdvertisement.error == .timeout(.connect))
}

/// A call the bus could only answer by starting bluetoothd, which failed (`Spawn.ChildExited`,
/// seen in the lab after bluetoothd crashed), means bluetoothd is not running: never a raw D-Bus
/// error for the user (issue 20).
@Test func aFailedActivationOfBluetoothdIsBluetoothdNotRunning() {
    for name in ["org.freedesktop.DBus.Error.Spawn.ChildExited", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
                 "org.freedesktop.DBus.Error.NameHasNoOwner"] {
        #expect(BlueZError.from(.remote(DBusRemoteError(name: DBusErrorName(name), message: "Process org.bluez exited with status 1"))) == .bluetoothdNotRunning)
    }
    #expect(BlueZError.from(.remote(DBusRemoteError(name: "org.freedesktop.DBus.Error.SpawnFoo", message: ""))) != .bluetoothdNotRunning)
}

/// Errors keep their typed cause (issue 21): the bus that cannot be reached keeps libdbus's error
/// name and message; bluetoothd's NotReady names no adapter, so none is made up from its message.
@Test func errorsKeepTheirTypedCause() {
    let noBus = DBusError.connectionFailed(DBusRemoteError(
        name: "org.freedesktop.DBus.Error.FileNotFound", message: "Failed to connect to socket /x: No such file or directory"))
    #expect(BlueZError.from(noBus) == .busUnavailable(noBus))
    #expect("\(noBus)" == "Failed to connect to socket /x: No such file or directory")
    #expect(BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready"))) == .adapterPoweredOff(nil))
    #expect("\(BlueZError.Wait.servicesResolved)" == "ServicesResolved")
}

/// Codes decide equality; the reason is for people (swift-certificates' rule).
@Test func equalityIsOnTheCode() {
    #expect(DBusRemoteError(name: "org.bluez.Error.Failed", message: "a") == DBusRemoteError(name: "org.bluez.Error.Failed", message: "b"))
    #expect(DBusRemoteError(name: "org.bluez.Error.Failed", message: "a") != DBusRemoteError(name: "org.bluez.Error.InProgress", message: "a"))
    #expect(DBusProblem(.badSignature, "array signature x") == DBusProblem(.badSignature))
    #expect(DBusError.malformedMessage(DBusProblem(.emptyVariant)) != .malformedMessage(DBusProblem(.emptyStructure)))
}

/// Issue 31, item 4: a `Device1.Disconnect` that failed is not forgotten unless the link is over
/// anyway (not connected, or the device object gone); a timeout or another refusal means the link
/// may still be up, and the receiver tries again.
@Test func aFailedDisconnectIsForgottenOnlyWhenTheLinkIsGone() {
    #expect(GattPeripheral.linkGone(after: BlueZError.from(.remote(DBusRemoteError(name: "org.bluez.Error.NotConnected", message: "Not Connected")))))
    #expect(GattPeripheral.linkGone(after: BlueZError.from(.remote(DBusRemoteError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "")))))
    #expect(GattPeripheral.linkGone(after: .bluez(DBusRemoteError(name: "org.bluez.Error.DoesNotExist", message: ""))))
    #expect(!GattPeripheral.linkGone(after: .dbus(.timeout)))
    #expect(!GattPeripheral.linkGone(after: .bluez(DBusRemoteError(name: "org.bluez.Error.InProgress", message: "In Progress"))))
    #expect(!GattPeripheral.linkGone(after: .bluetoothdNotRunning))
}
