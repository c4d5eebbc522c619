@testable import BlesendCLI
import Foundation
import Keys
import Testing
import TestSupport

/// `blesend pair` and `blerecv pair` as built, up to the radio: what they refuse before pairing
/// (a name the user chose that is taken, a code that is no code), and the key pair they make for
/// a machine that has none. The pairing itself runs in the lab (e2e.sh, discovery).

@Test func aChosenNameTakenInTheAddressBookIsRefusedBeforePairingWithTheCommandsThatFreeIt() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let env = ["XDG_CONFIG_HOME": d + "/config", "XDG_STATE_HOME": d + "/state"]
    let pinned = try CommandRun.run("blesend", ["receivers", "add", "\(d)/them.pub", "--name", "desk"], environment: env)
    #expect(pinned.status == 0, "\(pinned.stderr)")
    let run = try CommandRun.run("blesend", ["pair", "--code", "1234 5678", "--name", "desk", "--adapter", "hci99"], environment: env)
    #expect(run.status == 65, "\(run.stderr)")
    #expect(run.stderr.contains("the name \"desk\" is taken"), "\(run.stderr)")
    #expect(run.stderr.contains("blesend receivers rename desk desk-old") && run.stderr.contains("blesend receivers remove desk"), "\(run.stderr)")
}

@Test func aChosenNameTakenInTheTrustDirectoryIsRefusedBeforePairing() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let env = ["XDG_CONFIG_HOME": d + "/config"]
    let trusted = try CommandRun.run("blerecv", ["trust", "add", "\(d)/them.pub", "--name", "laptop", "--trust", d + "/trusted"], environment: env)
    #expect(trusted.status == 0, "\(trusted.stderr)")
    let run = try CommandRun.run("blerecv", ["pair", "--name", "laptop", "--trust", d + "/trusted", "--key", d + "/me", "--adapter", "hci99"],
                                 environment: env)
    #expect(run.status == 65, "\(run.stderr)")
    #expect(run.stderr.contains("the name \"laptop\" is taken") && run.stderr.contains("blerecv trust remove laptop"), "\(run.stderr)")
}

@Test(arguments: ["1234", "1234 56789", "abcd efgh", "12345678x"])
func aCodeThatIsNotEightDigitsIsAUsageError(code: String) throws {
    let run = try CommandRun.run("blesend", ["pair", "--code", code, "--adapter", "hci99"], environment: ["XDG_CONFIG_HOME": "/nonexistent"])
    #expect(run.status == 64, "\(code): \(run.stderr)")
    #expect(run.stderr.contains("8 digits"), "\(code): \(run.stderr)")
}

@Test func pairMakesTheMissingKeyPairThenGoesOnToTheRadio() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    // No bluetoothd answers on this bus: the run gets as far as the radio (exit 67) with a key pair made.
    let env = ["XDG_CONFIG_HOME": d + "/config", "XDG_STATE_HOME": d + "/state", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(d)/no-bus"]
    let run = try CommandRun.run("blesend", ["pair", "--code", "1234 5678", "--timeout", "1"], environment: env)
    #expect(run.status == 67, "\(run.stderr)")
    #expect(run.stderr.contains("made this machine's key pair"), "\(run.stderr)")
    var status = stat()
    #expect(stat(d + "/config/blesend/id", &status) == 0 && status.st_mode & 0o777 == 0o600)
    #expect(FileManager.default.fileExists(atPath: d + "/config/blesend/id.pub"))
    // The second run finds it and makes none.
    let again = try CommandRun.run("blesend", ["pair", "--code", "1234 5678", "--timeout", "1"], environment: env)
    #expect(again.status == 67 && !again.stderr.contains("made this machine's key pair"), "\(again.stderr)")
}

/// Where pairing writes the peer's key: a suggested name taken by another key is numbered; a key
/// already there keeps its name (an earlier pairing whose last message was lost); a name the user
/// chose is used as it is.
@Test func pinnedKeysTakeAFreeNameAndKeepAKeyThatIsThere() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let me = try KeyFile.loadPublicKey(path: "\(d)/me.pub"), them = try KeyFile.loadPublicKey(path: "\(d)/them.pub")
    let book = NamedKeyDirectory.receiverBook(at: d + "/book")
    let first = try PinnedKeys.pin(me, chosen: nil, suggested: "desk", in: book)
    #expect(first == PinnedKeys.Pinned(name: "desk", path: d + "/book/desk.pub", existed: false))
    let second = try PinnedKeys.pin(them, chosen: nil, suggested: "desk", in: book)
    #expect(second.name == "desk-2" && !second.existed)
    let again = try PinnedKeys.pin(me, chosen: nil, suggested: "other", in: book)
    #expect(again == PinnedKeys.Pinned(name: "desk", path: d + "/book/desk.pub", existed: true))
    #expect(try book.entries().count == 2)
    #expect(PinnedKeys.usableName("my laptop (work)") == "mylaptopwork")
    #expect(PinnedKeys.usableName("..") == "peer")
}
