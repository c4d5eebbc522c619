import EventSchema
import Foundation
import Keys
import L2CAP
import Testing
import TestSupport

/// Scenario tests: the built `blesend` and `blerecv` binaries, their output and exit codes.
/// No radio: where Bluetooth is needed, the tools are pointed at an empty private bus.

func scratch() throws -> String {
    let path = NSTemporaryDirectory() + "blesend-cli-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}

func mode(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
}

func blesend(_ args: [String], env: [String: String] = [:], stdin: Data? = nil) throws -> CommandRun {
    try CommandRun.run("blesend", args, environment: env, stdin: stdin)
}

func blerecv(_ args: [String], env: [String: String] = [:]) throws -> CommandRun {
    try CommandRun.run("blerecv", args, environment: env)
}

/// A folder with a sender and a receiver key pair and a file to send.
struct Fixture {
    let dir: String
    init() throws {
        dir = try scratch()
        for who in ["me", "them"] {
            let run = try blesend(["keygen", "-o", "\(dir)/\(who)"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        try Data("hello".utf8).write(to: URL(fileURLWithPath: "\(dir)/hello.txt"))
    }
    func remove() { try? FileManager.default.removeItem(atPath: dir) }
}

@Test func keygenWritesBothFilesWithTheRightModesAndRefusesToOverwrite() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let first = try blesend(["keygen", "-o", "\(dir)/id"])
    #expect(first.status == 0)
    #expect(first.stdout.hasPrefix("blesend-pub1:"))
    #expect(first.stderr.contains(/fingerprint ([0-9a-f]{4} ){7}[0-9a-f]{4}\n/), "\(first.stderr)")
    #expect(try mode("\(dir)/id") == 0o600)
    #expect(try mode("\(dir)/id.pub") == 0o644)
    let pub = try String(contentsOfFile: "\(dir)/id.pub", encoding: .utf8)
    #expect(pub.contains(first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))

    let again = try blesend(["keygen", "-o", "\(dir)/id"])
    #expect(again.status == 65)
    #expect(again.stderr.contains("blesend: error:") && again.stderr.contains("already exists"))
    #expect(again.stderr.contains("blesend: hint:"))
    #expect(try String(contentsOfFile: "\(dir)/id.pub", encoding: .utf8) == pub, "the old key is untouched")

    let forced = try blesend(["keygen", "-o", "\(dir)/id", "--force"])
    #expect(forced.status == 0)
    #expect(forced.stdout != first.stdout)
}

@Test func keygenUsesTheXDGConfigFolderByDefault() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let run = try blesend(["keygen"], env: ["XDG_CONFIG_HOME": dir])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try mode("\(dir)/blesend") == 0o700)
    #expect(try mode("\(dir)/blesend/id") == 0o600)
    let pubkey = try blesend(["pubkey"], env: ["XDG_CONFIG_HOME": dir])
    #expect(pubkey.status == 0)
    #expect(pubkey.stdout == run.stdout)
}

@Test func pubkeyPrintsTheKeyAndFingerprint() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let run = try blesend(["pubkey", "--key", "\(fixture.dir)/me"])
    #expect(run.status == 0)
    let key = try KeyFile.loadPublicKey(path: "\(fixture.dir)/me.pub")
    #expect(run.stdout == key.text + "\n")
    #expect(run.stderr.contains(key.fingerprint))
    // All 128 bits, in eight groups of four for reading aloud.
    #expect(run.stderr.contains(/fingerprint: ([0-9a-f]{4} ){7}[0-9a-f]{4}\n/), "\(run.stderr)")
}

@Test func trustAddsAPeerAndRefusesDuplicatesAndBadNames() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let trusted = "\(fixture.dir)/trusted"
    let add = try blerecv(["trust", "\(fixture.dir)/them.pub", "--name", "them", "--dir", trusted])
    #expect(add.status == 0, "\(add.stderr)")
    #expect(FileManager.default.fileExists(atPath: "\(trusted)/them.pub"))
    #expect(try KeyFile.loadPublicKey(path: "\(trusted)/them.pub") == KeyFile.loadPublicKey(path: "\(fixture.dir)/them.pub"))

    let duplicate = try blerecv(["trust", "\(fixture.dir)/them.pub", "--name", "other", "--dir", trusted])
    #expect(duplicate.status == 65)
    #expect(duplicate.stderr.contains("already trusted"))
    let badName = try blerecv(["trust", "\(fixture.dir)/me.pub", "--name", "../evil", "--dir", trusted])
    #expect(badName.status == 65)
    let secret = try blerecv(["trust", "\(fixture.dir)/me", "--name", "x", "--dir", trusted])
    #expect(secret.status == 65, "a secret key file is not a public key")
}

@Test func badKeysAreKeyProblems() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let garbageTo = try blesend(["--key", "\(d)/me", "--to", "not-a-key", "\(d)/hello.txt"])
    #expect(garbageTo.status == 65)
    #expect(garbageTo.stderr.contains("blesend: error:"))

    try Data("blesend-pub1:AAAA\n".utf8).write(to: URL(fileURLWithPath: "\(d)/broken.pub"))
    let broken = try blesend(["--key", "\(d)/me", "--to", "\(d)/broken.pub", "\(d)/hello.txt"])
    #expect(broken.status == 65)

    chmod("\(d)/me", 0o644)
    let readable = try blesend(["--key", "\(d)/me", "--to", "\(d)/them.pub", "\(d)/hello.txt"])
    #expect(readable.status == 65)
    #expect(readable.stderr.contains("readable by others"))
    #expect(readable.stderr.contains("chmod 600"))

    let missing = try blesend(["--key", "\(d)/nope", "--to", "\(d)/them.pub", "\(d)/hello.txt"])
    #expect(missing.status == 65)
    #expect(missing.stderr.contains("blesend keygen"))

    let pasted = try blesend(["--key", "\(d)/them", "--to", String(decoding: try Identity(secretText: Array(try String(contentsOfFile: "\(d)/them", encoding: .utf8).split(separator: "\n").last!.utf8)).secretTextBytes(), as: UTF8.self), "\(d)/hello.txt"])
    #expect(pasted.status == 65)
    #expect(pasted.stderr.contains("secret key"))
}

@Test(arguments: [
    (["blesend", "--to", "x"], "at least one file"),
    (["blesend", "--to", "x", "--min-rssi", "50", "f"], "--min-rssi"),
    (["blesend", "--to", "x", "--timeout", "0", "f"], "--timeout"),
    (["blesend", "--to", "x", "-", "-"], "only once"),
    (["blesend", "--to", "x", "--name", "n", "f"], "--name"),
    (["blesend", "--to", "x", "--bogus", "f"], "--bogus"),
    (["blerecv", "--trust", "k", "--stdout", "--json"], "pick one"),
    (["blerecv", "trust", "k"], "--name"),
    (["blerecv", "--trust", "k", "--ask"], "must be a terminal"),
])
func wrongArgumentsAreUsageErrors(_ args: [String], _ mentions: String) throws {
    let run = try CommandRun.run(args[0], Array(args.dropFirst()))
    #expect(run.status == 64, "\(args): \(run.stderr)")
    #expect(run.stderr.contains(mentions), "\(args): \(run.stderr)")
}

@Test func helpTeachesByExample() throws {
    for (tool, args) in [("blesend", ["send", "--help"]), ("blesend", ["keygen", "--help"]), ("blesend", ["pubkey", "--help"]),
                         ("blerecv", ["receive", "--help"]), ("blerecv", ["trust", "--help"])] {
        let run = try CommandRun.run(tool, args)
        #expect(run.status == 0)
        #expect(run.stdout.contains("Examples:"), "\(tool) \(args)")
    }
    let send = try blesend(["send", "--help"])
    #expect(send.stdout.contains("Exit codes"))
}

@Test func bluetoothdUnreachableGivesItsExitCode() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let bus = try TestBus()
    defer { bus.stop() }
    let env = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
    let send = try blesend(["--key", "\(d)/me", "--to", "\(d)/them.pub", "--timeout", "2", "\(d)/hello.txt"], env: env)
    #expect(send.status == 67, "\(send.stderr)")
    #expect(send.stderr.contains("bluetoothd is not running"))
    #expect(send.stderr.contains("blesend: hint:"))

    _ = try blerecv(["trust", "\(d)/me.pub", "--name", "me", "--dir", "\(d)/trusted"])
    let receive = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", d], env: env)
    #expect(receive.status == 67, "\(receive.stderr)")

    let noBus = try blesend(["--key", "\(d)/me", "--to", "\(d)/them.pub", "\(d)/hello.txt"],
                            env: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(d)/no-such-socket"])
    #expect(noBus.status == 67, "\(noBus.stderr)")
}

@Test func receiverChecksItsSetupBeforeAdvertising() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    try FileManager.default.createDirectory(atPath: "\(d)/empty", withIntermediateDirectories: false)
    let emptyTrust = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/empty"])
    #expect(emptyTrust.status == 65)
    #expect(emptyTrust.stderr.contains("blerecv trust"))
    let missingTrust = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/missing"])
    #expect(missingTrust.status == 65)
    _ = try blerecv(["trust", "\(d)/me.pub", "--name", "me", "--dir", "\(d)/trusted"])
    // A trust directory others can write would let them add their own key: refused (65).
    chmod("\(d)/trusted", 0o777)
    let openTrust = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/trusted"])
    #expect(openTrust.status == 65, "\(openTrust.stderr)")
    #expect(openTrust.stderr.contains("everyone can write it") && openTrust.stderr.contains("chmod go-w"), "\(openTrust.stderr)")
    chmod("\(d)/trusted", 0o755)
    let badOut = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", "\(d)/hello.txt"])
    #expect(badOut.status == 71, "\(badOut.stderr)")
    #expect(badOut.stderr.contains("not a directory"))
    // An output folder anyone may write: they could rename or replace what is stored there.
    try FileManager.default.createDirectory(atPath: "\(d)/shared", withIntermediateDirectories: false)
    chmod("\(d)/shared", 0o777)
    let sharedOut = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", "\(d)/shared"])
    #expect(sharedOut.status == 71, "\(sharedOut.stderr)")
    #expect(sharedOut.stderr.contains("refusing to receive into") && sharedOut.stderr.contains("chmod go-w"), "\(sharedOut.stderr)")
}

@Test func jsonEventsMatchTheDocumentedSchema() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let bus = try TestBus()
    defer { bus.stop() }
    let run = try blesend(["--json", "--key", "\(d)/me", "--to", "\(d)/them.pub", "--timeout", "2", "\(d)/hello.txt"],
                          env: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    #expect(run.status == 67)
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count >= 2, "scanning, then error: \(run.stdout)")
    let schema = try JSONSchemaSubset.load()
    var events: [String] = []
    for line in lines {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(schema.violations(of: object).isEmpty, "\(line): \(schema.violations(of: object))")
        events.append(object["event"] as? String ?? "?")
    }
    #expect(events.first == "scanning")
    #expect(events.last == "error")
    // Every line says which contract it keeps; the error names its status by its stable code.
    #expect(lines.allSatisfy { $0.hasPrefix(#"{"event":""#) && $0.contains(#"","v":1"#) }, "\(run.stdout)")
    let error = try #require(try JSONSerialization.jsonObject(with: Data(lines[lines.count - 1].utf8)) as? [String: Any])
    #expect(error["code"] as? String == "bluetooth-unavailable")
    #expect(error["exit"] as? Int == 67)
    #expect(error["summary"] as? String == "no adapter, or bluetoothd unreachable")
    // The validator itself must be able to fail: a missing required field, a wrong type, an
    // unknown event; and a field it does not know is allowed (the contract adds fields).
    #expect(!schema.violations(of: ["event": "error", "v": 1, "code": 3]).isEmpty)
    #expect(!schema.violations(of: ["event": "error", "v": 1, "code": "usage", "exit": 64, "summary": "usage error", "message": "m"]).isEmpty)
    #expect(!schema.violations(of: ["event": "done", "v": 1, "files": "1"]).isEmpty)
    #expect(!schema.violations(of: ["event": "nonsense", "v": 1]).isEmpty)
    #expect(!schema.violations(of: ["event": "done", "files": 1]).isEmpty, "no v")
    #expect(schema.violations(of: ["event": "done", "v": 1, "files": 1, "extra": true]).isEmpty)
    // A GATT connection after the L2CAP channel failed says why (Reporter.connected).
    let fallback: [String: Any] = ["event": "connected", "v": 1, "device": "/org/bluez/hci1/dev_X", "transport": "gatt", "payload": 244,
                                   "mtu": 247, "phy": NSNull(), "l2cap_fallback": "\(L2CAPError.connectFailed(errno: 111))"]
    #expect(schema.violations(of: fallback).isEmpty, "\(schema.violations(of: fallback))")
}
