#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Keys
import Testing
import TestSupport

/// docs/threat-model.md, attack table, "Keys" rows (and the start-up check of "the target folder
/// not writable"): the built `blesend` and `blerecv` binaries, their messages and exit codes.
/// The system bus is pointed at a socket that does not exist: a tool that got past its key checks
/// would stop there with 67 (Bluetooth unavailable), which is how the control case shows that the
/// key check, and nothing later, is what stops the others.

/// A folder with two key pairs made by `blesend keygen`, a trust directory for the receiver, a
/// file to send and an empty folder to receive into.
final class KeyWorld {
    let dir: String
    var out: String { dir + "/out" }
    var trusted: String { dir + "/trusted" }
    var noBus: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir)/no-such-bus"] }

    init() throws {
        dir = NSTemporaryDirectory() + "blesend-attack-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        for who in ["me", "them"] {
            let run = try CommandRun.run("blesend", ["keygen", "-o", "\(dir)/\(who)"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let trust = try CommandRun.run("blerecv", ["trust", "\(dir)/me.pub", "--name", "me", "--dir", trusted])
        #expect(trust.status == 0, "\(trust.stderr)")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: "\(dir)/hello.txt"))
    }

    private var mounts: [String] = []

    deinit {
        for path in mounts { Tmpfs.unmount(path) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Puts the receive folder on a read-only tmpfs, unmounted when this goes away.
    func mountReadOnlyOut() throws {
        try Tmpfs.mount(at: out, kilobytes: 64, readOnly: true)
        mounts.append(out)
    }

    /// `blesend --key KEY --to TO hello.txt`, with no Bluetooth to reach.
    func send(key: String? = nil, to: String? = nil) throws -> CommandRun {
        try CommandRun.run("blesend", ["--key", key ?? "\(dir)/me", "--to", to ?? "\(dir)/them.pub", "--timeout", "1", "\(dir)/hello.txt"],
                           environment: noBus, timeout: 30)
    }

    /// `blerecv --key KEY --trust DIR --out OUT`, with no Bluetooth to reach.
    func receive(key: String? = nil, trust: String? = nil, out: String? = nil) throws -> CommandRun {
        try CommandRun.run("blerecv", ["--key", key ?? "\(dir)/them", "--trust", trust ?? trusted, "--out", out ?? self.out],
                           environment: noBus, timeout: 30)
    }

    /// Every path under the world's folder, to show that a refused start created nothing.
    func snapshot() -> [String] {
        (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).sorted()
    }

    func write(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
        unlink(path)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
    }

    func line(of path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").map(String.init).first { !$0.hasPrefix("#") } ?? ""
    }
}

@Test("attack: a key file with wrong permissions", arguments: [0o644, 0o640, 0o604, 0o660, 0o666])
func keyFileWithWrongPermissions(mode: Int) throws {
    let world = try KeyWorld()
    let before = world.snapshot()
    for (tool, key) in [("blesend", "\(world.dir)/me"), ("blerecv", "\(world.dir)/them")] {
        chmod(key, mode_t(mode))
        let run = tool == "blesend" ? try world.send(key: key) : try world.receive(key: key)
        #expect(run.status == 65, "\(tool) mode \(String(mode, radix: 8)): \(run.stderr)")
        #expect(run.stderr.contains("\(tool): error: \(key) is readable by others (mode \(String(mode, radix: 8)))"), "\(run.stderr)")
        #expect(run.stderr.contains("chmod 600 \(key)"), "\(run.stderr)")
        chmod(key, 0o600)
    }
    #expect(world.snapshot() == before, "nothing was created")
    #expect(try FileManager.default.contentsOfDirectory(atPath: world.out).isEmpty)
}

@Test("attack: a key file with wrong permissions: the control case (0600 passes the key check)")
func keyFileWithRightPermissions() throws {
    let world = try KeyWorld()
    for run in [try world.send(), try world.receive()] {
        #expect(run.status == 67, "past the keys, stopped at Bluetooth: \(run.stderr)")
        #expect(!run.stderr.contains("readable by others"))
    }
}

/// (what is wrong, which tool reads it, the key file's content given the good one, what the message says)
let badKeys: [(String, String, @Sendable (String) -> [UInt8], String)] = [
    ("secret key truncated", "blesend", { Array($0.prefix($0.count / 2).utf8) }, "the secret key is damaged"),
    ("secret key with a typo", "blesend", { line in
        var chars = Array(line)
        let i = chars.count - 5
        chars[i] = chars[i] == "A" ? "B" : "A"
        return Array(String(chars).utf8)
    }, "checksum does not match"),
    ("secret key garbage", "blerecv", { _ in (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }.filter { $0 != 0x0A } }, "not a blesend secret key"),
    ("secret key file empty", "blerecv", { _ in [] }, "holds no key"),
    ("public key in the secret key file", "blesend", { _ in [] }, "public key where a secret key was expected"),
    ("public key truncated", "blesend", { Array($0.prefix(30).utf8) }, "the public key is damaged"),
    ("public key garbage", "blesend", { _ in Array("-----BEGIN OPENSSH PRIVATE KEY-----\n".utf8) }, "not a blesend public key"),
    ("trusted public key garbage", "blerecv", { _ in Array("blesend-pub1:@@@@\n".utf8) }, "the public key is damaged"),
]

@Test("attack: a key file with a truncated or garbage key", arguments: badKeys.indices)
func keyFileWithTruncatedOrGarbageKey(index: Int) throws {
    let (what, tool, content, message) = badKeys[index]
    let world = try KeyWorld()
    let path: String
    let start: () throws -> CommandRun
    switch what {
    case let w where w.hasPrefix("secret"):
        path = tool == "blesend" ? "\(world.dir)/me" : "\(world.dir)/them"
        try world.write(path, content(try world.line(of: path)) + [0x0A], mode: 0o600)
        start = { tool == "blesend" ? try world.send(key: path) : try world.receive(key: path) }
    case "public key in the secret key file":
        path = "\(world.dir)/me"
        try world.write(path, Array((try world.line(of: "\(world.dir)/me.pub") + "\n").utf8), mode: 0o600)
        start = { try world.send(key: path) }
    case let w where w.hasPrefix("public"):
        path = "\(world.dir)/them.pub"
        try world.write(path, content(try world.line(of: path)), mode: 0o644)
        start = { try world.send(to: path) }
    default:
        path = "\(world.trusted)/mallory.pub"
        try world.write(path, content(""), mode: 0o644)
        start = { try world.receive() }
    }
    let before = world.snapshot()
    let run = try start()
    #expect(run.status == 65, "\(what): \(run.stderr)")
    #expect(run.stderr.contains("\(tool): error:"), "\(what): \(run.stderr)")
    #expect(run.stderr.contains(path), "\(what): the message names the file: \(run.stderr)")
    #expect(run.stderr.contains(message), "\(what): \(run.stderr)")
    #expect(world.snapshot() == before, "nothing was created")
    #expect(try FileManager.default.contentsOfDirectory(atPath: world.out).isEmpty)
}

@Test("attack: the target folder not writable: blerecv refuses to start (read-only tmpfs)",
      .enabled(if: Tmpfs.available, "needs permission to mount a tmpfs (root)"))
func blerecvRefusesAReadOnlyFolder() throws {
    let world = try KeyWorld()
    try world.mountReadOnlyOut()
    let run = try world.receive()
    #expect(run.status == 71, "\(run.stderr)")
    #expect(run.stderr.contains("blerecv: error: \(world.out) is not writable: Read-only file system"), "\(run.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: world.out).isEmpty)
}
