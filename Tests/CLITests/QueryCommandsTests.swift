import Foundation
@testable import BlesendCLI
import Durable
import Keys
import Storage
import TestSupport
import Testing
import Transfer

/// Issue 34: `history` and `partials` only read. A `--state` or `--out` that does not exist was an
/// empty answer (exit 0), and `history --state /typo` created the folder; run as yourself, they
/// showed nothing of what the service keeps, and said nothing of it.
@Suite struct QueryCommandsTests {
    static func history(_ tool: String, _ args: [String], env: [String: String] = [:]) throws -> CommandRun {
        tool == "blesend" ? try blesend(["history"] + args, env: env) : try blerecv(["history"] + args, env: env)
    }

    /// A typo'd `--state`: exit 64 with a hint, and nothing made (nor any missing parent).
    @Test(arguments: [("blesend", [String]()), ("blerecv", []), ("blesend", ["--json"]), ("blerecv", ["--since", "7d"])])
    func aStateFolderThatDoesNotExistIsAnErrorAndIsNotMade(_ tool: String, _ extra: [String]) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for typo in ["\(dir)/typo", "\(dir)/no/such/parent"] {
            let run = try Self.history(tool, ["--state", typo] + extra)
            #expect(run.status == ExitStatus.usage.rawValue, "\(tool) \(typo): \(run.stderr)")
            #expect(run.stderr.contains("\(tool): error: no state folder \(typo)") && run.stderr.contains("hint:"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: typo), "\(typo) was made")
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/no"), "a parent of \(typo) was made")
        }
    }

    /// A fresh machine (the default state folder missing): no history yet, exit 0, nothing made.
    @Test(arguments: ["blesend", "blerecv"])
    func theDefaultFolderMissingIsNoHistoryYet(_ tool: String) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try Self.history(tool, [], env: ["XDG_STATE_HOME": "\(dir)/state", "HOME": dir])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty && run.stderr.contains("\(tool): no history yet (\(dir)/state/blesend does not exist"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/state"))
    }

    /// A state folder with no history in it: nothing in the history, and no history file made.
    @Test func anEmptyStateFolderGetsNoHistoryFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try blesend(["history", "--state", dir])
        #expect(run.status == 0 && run.stderr.contains("nothing in the history"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    /// `partials --out` that does not exist: exit 64 with a hint, nothing made.
    @Test func partialsOutThatDoesNotExistIsAnError() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let run = try blerecv(["partials", "--key", "\(fixture.dir)/me", "--out", "\(fixture.dir)/typo"])
        #expect(run.status == ExitStatus.usage.rawValue, "\(run.stderr)")
        #expect(run.stderr.contains("blerecv: error: no folder \(fixture.dir)/typo") && run.stderr.contains("hint:"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(fixture.dir)/typo"))
    }

    /// Partials kept in the out folder by a receiver with another key are counted, not listed.
    @Test func partialsSaysHowManyBelongToAnotherReceiverKey() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let out = fixture.dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let sender = try KeyFile.loadIdentity(path: "\(fixture.dir)/them")
        let other = try DirectoryFileStore(directory: out, modes: FileModes(umask: 0o022), temporaryTag: "someoneelse",
                                           keepPartials: .seconds(3_600))
        for (index, name) in ["a.bin", "b.bin"].enumerated() {
            let file = try other.begin(name: name, size: 1_000, sender: "them")
            try file.write([UInt8](repeating: 1, count: 100), at: 0)
            try file.checkpoint(PartialCheckpoint(senderKey: sender.publicKey.bytes, id: TransferID(halves: (9, UInt64(index))), name: name,
                                                  size: 1_000, durable: 100, prefixHash: [UInt8](repeating: 0, count: 32)))
            file.closeForResume()
        }
        let run = try blerecv(["partials", "--key", "\(fixture.dir)/me", "--out", out])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty && run.stderr.contains("blerecv: 2 kept partials belong to another receiver key or user in \(out)"),
                "\(run.stderr)")
    }

    /// The service's folder, as another user sees it: probes injected (the tests run as root).
    static func service(_ folder: String, readable: Bool = true) -> ServiceState {
        var service = ServiceState()
        service.folder = folder
        service.readable = { _ in readable }
        return service
    }

    struct NoteCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var serviceExists: Bool
        var readable: Bool
        var entries: Int
        var ownIsService: Bool
        var expected: String?
    }

    @Test(arguments: [
        NoteCase(testDescription: "no service here", serviceExists: false, readable: true, entries: 0, ownIsService: false, expected: nil),
        NoteCase(testDescription: "unreadable: said so", serviceExists: true, readable: false, entries: 0, ownIsService: false,
                 expected: "blerecv: the service's state in SERVICE is not readable by you: run as blesend or with sudo (sudo -u blesend blerecv history --state SERVICE)"),
        NoteCase(testDescription: "readable, 3 entries: counted", serviceExists: true, readable: true, entries: 3, ownIsService: false,
                 expected: "blerecv: 3 history entries belong to the service (SERVICE): run as blesend or with sudo (sudo -u blesend blerecv history --state SERVICE)"),
        NoteCase(testDescription: "readable, 1 entry", serviceExists: true, readable: true, entries: 1, ownIsService: false,
                 expected: "blerecv: 1 history entry belongs to the service (SERVICE): run as blesend or with sudo (sudo -u blesend blerecv history --state SERVICE)"),
        NoteCase(testDescription: "readable, no history", serviceExists: true, readable: true, entries: 0, ownIsService: false, expected: nil),
        NoteCase(testDescription: "looking at the service's own folder", serviceExists: true, readable: true, entries: 3, ownIsService: true,
                 expected: nil),
    ])
    func historySaysWhatTheServiceKeeps(_ test: NoteCase) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = dir + "/service"
        if test.serviceExists {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            if test.entries > 0 {
                let journal = try HistoryJournal(disk: try PosixDisk(folder: folder), name: History.receivedName)
                for index in 0..<test.entries {
                    try journal.append(HistoryEntry(time: 1_000 + UInt64(index), direction: .received, outcome: .saved, resumed: false,
                                                    size: 5, airBytes: nil, hash: [], peer: "alice", fingerprint: "0000",
                                                    path: "f\(index)", transport: "gatt"))
                }
            }
        }
        let own = test.ownIsService ? folder + "/" : dir + "/mine"
        let note = HistoryOptions.serviceNote(tool: "blerecv", own: own, service: Self.service(folder, readable: test.readable))
        #expect(note == test.expected?.replacingOccurrences(of: "SERVICE", with: folder))
    }

    @Test func partialsSaysWhatTheServiceKeeps() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = dir + "/service"
        try FileManager.default.createDirectory(atPath: folder + "/incoming", withIntermediateDirectories: true)
        let mine = dir + "/mine"
        #expect(Partials.notes(out: mine, others: 0, service: Self.service(folder)).isEmpty, "nothing kept there: nothing said")
        for name in [".a.bin.abc123-XyZ012.blesend-keep", ".a.bin.abc123-XyZ012.blesend-part", ".photos.abc123-Qwe456.blesend-keep", "done.txt"] {
            FileManager.default.createFile(atPath: "\(folder)/incoming/\(name)", contents: Data())
        }
        let command = "sudo -u blesend blerecv partials --key \(folder)/id --out \(folder)/incoming"
        #expect(Partials.notes(out: mine, others: 1, service: Self.service(folder)) == [
            "blerecv: 1 kept partial belongs to another receiver key or user in \(mine) (see them with that receiver's --key, as its user)",
            "blerecv: 2 kept partials belong to the service (\(folder)/incoming): run as blesend or with sudo (\(command))",
        ])
        #expect(Partials.notes(out: mine, others: 0, service: Self.service(folder, readable: false)) == [
            "blerecv: the service's state in \(folder) is not readable by you: run as blesend or with sudo (\(command))",
        ])
        #expect(Partials.notes(out: folder + "/incoming", others: 0, service: Self.service(folder)).isEmpty, "run on the service's own folder")
    }
}
