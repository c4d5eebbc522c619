@testable import BlesendCLI
import EventSchema
import Foundation
import Keys
import Logging
import Testing
import TestSupport

/// `blerecv trust add|list|remove|rename` and `blesend receivers …`, run as built; the default
/// directories under XDG_CONFIG_HOME; `blesend --to NAME`; what blerecv prepares on disk.

/// The two sides' commands, so that one table runs on both.
private struct Side: CustomTestStringConvertible, Sendable {
    let tool: String
    let group: String
    /// Arguments that pick the directory, and the environment.
    let directoryArguments: @Sendable (String) -> [String]
    let directory: @Sendable (String) -> String
    let event: String
    var testDescription: String { "\(tool) \(group)" }

    func run(_ words: [String], in dir: String, stdin: Data? = nil) throws -> CommandRun {
        try CommandRun.run(tool, [group] + words + directoryArguments(dir), environment: ["XDG_CONFIG_HOME": dir + "/config"], stdin: stdin)
    }

    static let trust = Side(tool: "blerecv", group: "trust", directoryArguments: { ["--trust", $0 + "/trusted"] },
                            directory: { $0 + "/trusted" }, event: "trusted")
    static let receivers = Side(tool: "blesend", group: "receivers", directoryArguments: { _ in [] },
                                directory: { $0 + "/config/blesend/receivers" }, event: "receiver")
}

@Test(arguments: [Side.trust, .receivers])
private func addListRenameRemoveOnBothSides(side: Side) throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let me = try KeyFile.loadPublicKey(path: "\(d)/me.pub"), them = try KeyFile.loadPublicKey(path: "\(d)/them.pub")

    let add = try side.run(["add", "\(d)/me.pub", "--name", "alice"], in: d)
    #expect(add.status == 0, "\(add.stderr)")
    #expect(try KeyFile.loadPublicKey(path: side.directory(d) + "/alice.pub") == me)
    let again = try side.run(["add", me.text, "--name", "alice"], in: d)
    #expect(again.status == 0 && again.stderr.contains("already"), "idempotent: \(again.stderr)")

    // (what is added, under which name, the exit status, what stderr must say)
    let refusals: [(String, String, Int32, [String])] = [
        ("\(d)/them.pub", "alice", 65, ["is taken", "\(side.tool) \(side.group) rename alice alice-old", "\(side.tool) \(side.group) remove alice"]),
        ("\(d)/me.pub", "bob", 65, [side.tool == "blerecv" ? "already trusted as" : "already in the address book as", "\(side.tool) \(side.group) rename alice bob"]),
        ("not-a-key", "bob", 65, ["neither a public key"]),
        ("blesend-pub1:AAAA", "bob", 65, ["damaged"]),
        ("\(d)/me", "bob", 65, ["secret key"]),
        ("\(d)/them.pub", "../evil", 65, ["not a usable peer name"]),
    ]
    for (key, name, status, mentions) in refusals {
        let run = try side.run(["add", key, "--name", name], in: d)
        #expect(run.status == status, "\(key) \(name): \(run.stderr)")
        for text in mentions { #expect(run.stderr.contains(text), "\(key) \(name): \(run.stderr)") }
    }

    // The key from standard input: a whole .pub file.
    let piped = try side.run(["add", "-", "--name", "bob"], in: d, stdin: try Data(contentsOf: URL(fileURLWithPath: "\(d)/them.pub")))
    #expect(piped.status == 0, "\(piped.stderr)")

    let list = try side.run(["list"], in: d)
    #expect(list.status == 0)
    #expect(list.stdout == "alice  \(me.fingerprint)  \(side.directory(d))/alice.pub\nbob  \(them.fingerprint)  \(side.directory(d))/bob.pub\n")
    let json = try side.run(["list", "--json"], in: d)
    let objects = try json.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    #expect(objects.map { $0["event"] as? String } == [side.event, side.event])
    #expect(objects.map { $0["v"] as? Int } == [1, 1])
    #expect(objects.map { $0["name"] as? String } == ["alice", "bob"])
    #expect(objects.first?["key"] as? String == me.text && objects.first?["fingerprint"] as? String == me.fingerprint)
    let schema = try JSONSchemaSubset.load()
    for line in json.stdout.split(separator: "\n") {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(schema.violations(of: object).isEmpty, "\(line): \(schema.violations(of: object))")
    }

    let rename = try side.run(["rename", "alice", "alice-old"], in: d)
    #expect(rename.status == 0, "\(rename.stderr)")
    let taken = try side.run(["rename", "alice-old", "bob"], in: d)
    #expect(taken.status == 65 && taken.stderr.contains("\(side.tool) \(side.group) remove bob"), "\(taken.stderr)")
    // By fingerprint, as eight words.
    let remove = try side.run(["remove"] + them.fingerprint.split(separator: " ").map(String.init), in: d)
    #expect(remove.status == 0, "\(remove.stderr)")
    let unknown = try side.run(["remove", "bob"], in: d)
    #expect(unknown.status == 65 && unknown.stderr.contains("\(side.tool) \(side.group) list"), "\(unknown.stderr)")
    let after = try side.run(["list"], in: d)
    #expect(after.stdout == "alice-old  \(me.fingerprint)  \(side.directory(d))/alice-old.pub\n")
}

@Test func trustKeepsItsOldFormAndTheDirAlias() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    // As the lab scripts run it: no subcommand, --dir.
    let old = try blerecv(["trust", "\(d)/me.pub", "--name", "me", "--dir", "\(d)/keys"])
    #expect(old.status == 0, "\(old.stderr)")
    let list = try blerecv(["trust", "list", "--dir", "\(d)/keys"])
    #expect(list.stdout.hasPrefix("me  "), "\(list.stdout)")
    let both = try blerecv(["trust", "list", "--dir", "\(d)/keys", "--trust", "\(d)/other"])
    #expect(both.status == 64 && both.stderr.contains("--dir is the old name of --trust"), "\(both.stderr)")
    let help = try blerecv(["trust", "add", "--help"])
    #expect(!help.stdout.contains("--dir"), "--dir is hidden")
    #expect(help.stdout.contains("Examples:"))
}

@Test func pastedKeysWithWhiteSpaceAreTrusted() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let text = try KeyFile.loadPublicKey(path: "\(d)/them.pub").text
    let wrapped = "  " + text.prefix(25) + "\n    " + text.dropFirst(25) + " \n"
    let run = try blerecv(["trust", "add", wrapped, "--name", "them", "--trust", "\(d)/t"])
    #expect(run.status == 0, "\(run.stderr)")
    let stdinLine = try CommandRun.run("blerecv", ["trust", "add", "-", "--name", "me", "--trust", "\(d)/t"], stdin: Data("  \(try KeyFile.loadPublicKey(path: "\(d)/me.pub").text)  \n".utf8))
    #expect(stdinLine.status == 0, "\(stdinLine.stderr)")
    let garbage = try CommandRun.run("blerecv", ["trust", "add", "-", "--name", "x", "--trust", "\(d)/t"], stdin: Data("hello\n".utf8))
    #expect(garbage.status == 65 && garbage.stderr.contains("no blesend public key"), "\(garbage.stderr)")
}

@Test func theDefaultTrustDirectoryFollowsXDGAndRoot() throws {
    #expect(KeyDirectoryLocation.defaultTrust(euid: 1000, configDirectory: "/c/blesend") == "/c/blesend/trusted")
    #expect(KeyDirectoryLocation.defaultTrust(euid: 0, configDirectory: "/c/blesend") == "/etc/blesend/trusted")
    // The one packaging makes and blerecv.service reads.
    let unit = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/packaging/blerecv.service", encoding: .utf8)
    #expect(unit.contains("--trust \(KeyDirectoryLocation.systemTrust)"))
    let help = try blerecv(["receive", "--help"])
    #expect(help.stdout.contains("$XDG_CONFIG_HOME/blesend/trusted"), "the default is in --help")

    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let env = ["XDG_CONFIG_HOME": "\(d)/config"]
    guard geteuid() != 0 else {
        // As root the default is /etc/blesend/trusted: only read it, never write there from a test.
        let list = try blerecv(["trust", "list"], env: env)
        #expect(list.stderr.contains("/etc/blesend/trusted") || list.stdout.contains("/etc/blesend/trusted"), "\(list.stderr)")
        return
    }
    let add = try blerecv(["trust", "add", "\(d)/me.pub", "--name", "me"], env: env)
    #expect(add.status == 0, "\(add.stderr)")
    #expect(FileManager.default.fileExists(atPath: "\(d)/config/blesend/trusted/me.pub"))
    let taken = try blerecv(["trust", "add", "\(d)/them.pub", "--name", "me"], env: env)
    #expect(taken.stderr.contains("blerecv trust remove me\n") || taken.stderr.contains("blerecv trust remove me "),
            "no --trust in the hint for the default directory: \(taken.stderr)")
}

@Test func sendToANameFromTheAddressBook() throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    let bus = try TestBus()
    defer { bus.stop() }
    let env = ["XDG_CONFIG_HOME": "\(d)/config", "DBUS_SYSTEM_BUS_ADDRESS": bus.address]
    #expect(try blesend(["receivers", "add", "\(d)/them.pub", "--name", "pi"], env: env).status == 0)
    let send = { (to: String) throws -> CommandRun in
        try blesend(["--key", "\(d)/me", "--to", to, "--timeout", "1", "--json", "\(d)/hello.txt"], env: env)
    }
    // Every form gets past the key: to the radio (exit 67, no bluetoothd on this bus).
    for to in ["pi", "\(d)/them.pub", try KeyFile.loadPublicKey(path: "\(d)/them.pub").text] {
        let run = try send(to)
        #expect(run.status == 67, "--to \(to): \(run.stderr)")
    }
    let unknown = try send("nope")
    #expect(unknown.status == 65, "\(unknown.stderr)")
    #expect(unknown.stdout.contains("no receiver called") && unknown.stdout.contains("blesend receivers list"), "\(unknown.stdout)")
    let nonsense = try send("not a key")
    #expect(nonsense.status == 65 && nonsense.stdout.contains("blesend receivers list"), "\(nonsense.stdout)")
    #expect(ReceiverAddress.peerName("\(d)/them.pub") == "them")
    let resolved = try ReceiverAddress.resolve("pi", book: .receiverBook(at: "\(d)/config/blesend/receivers"))
    let them = try KeyFile.loadPublicKey(path: "\(d)/them.pub")
    #expect(resolved.name == "pi" && resolved.key == them)
}

@Test func aMissingOutputFolderIsMadeOrRefusedWithTheMkdirToRun() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // (the --out given, made or not, what the error's hint says)
    let rows: [(String, Bool, String?)] = [
        ("\(dir)/inbox", true, nil),
        ("\(dir)/inbox", false, nil),
        ("\(dir)/new/", true, nil),
        ("\(dir)/no/such/inbox", false, "mkdir -p \(dir)/no/such/inbox"),
    ]
    for (out, made, hint) in rows {
        do throws(CLIError) {
            #expect(try ReceiveSetup.outputFolder(out) == made, "\(out)")
            #expect((try? mode(out)) == 0o700 || !made, "\(out) is the owner's alone")
            #expect(hint == nil, "\(out) was taken")
        } catch {
            #expect(error.status == .localIO)
            #expect(error.hint?.contains(hint ?? "?") == true, "\(out): \(error.hint ?? "no hint")")
        }
    }
    #expect(ReceiveSetup.parentFolder("inbox") == "." && ReceiveSetup.parentFolder("/inbox/") == "/")

    // As blerecv runs it, before it needs the radio.
    let fixture = try Fixture()
    defer { fixture.remove() }
    let d = fixture.dir
    _ = try blerecv(["trust", "add", "\(d)/me.pub", "--name", "me", "--trust", "\(d)/trusted"])
    let missing = try blerecv(["--key", "\(d)/them", "--trust", "\(d)/trusted", "--out", "\(d)/a/b"])
    #expect(missing.status == 71 && missing.stderr.contains("mkdir -p \(d)/a/b"), "\(missing.stderr)")
}

@Test func askMakesItsTrustDirectory() throws {
    let dir = try scratch()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let reporter = Reporter(options: .init(quiet: true, tool: "blerecv"), logger: Logger(label: "test"), writeError: { _ in })
    let trust = NamedKeyDirectory.trust(at: "\(dir)/config/blesend/trusted")
    let asking = try ReceiveSetup.trustDirectory(trust, asking: true, reporter: reporter)
    #expect(asking.store.peers.isEmpty)
    #expect(try mode(trust.path) == 0o700)

    let other = NamedKeyDirectory.trust(at: "\(dir)/missing", directoryOption: " --trust \(dir)/missing")
    do {
        _ = try ReceiveSetup.trustDirectory(other, asking: false, reporter: reporter)
        Issue.record("a missing trust directory was taken without --ask")
    } catch {
        #expect(error.status == .keyProblem)
        #expect(error.message.contains("does not exist") && error.hint?.contains("blerecv trust add") == true, "\(error)")
        #expect(error.hint?.contains("--ask") == true)
    }
    #expect(!FileManager.default.fileExists(atPath: "\(dir)/missing"), "made only with --ask")
}
