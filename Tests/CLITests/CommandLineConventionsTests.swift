import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import BlesendCLI

/// The command line's conventions (issue 34): negative numbers as option values, "did you mean"
/// for a mistyped command, one `tool: error:` prefix for every usage error, completions that
/// complete files, and the key commands in both tools.

// MARK: --min-rssi -50

@Test func minRSSITakesANegativeValueAsItsOwnWord() throws {
    let send = try #require(try BlesendCommand.parseAsRoot(["--to", "pi", "--min-rssi", "-50", "a.txt"]) as? Send)
    #expect(send.minRSSI == -50)
    #expect(send.files == ["a.txt"])
    let pair = try #require(try BlesendCommand.parseAsRoot(["pair", "--min-rssi", "-50"]) as? SenderPair)
    #expect(pair.minRSSI == -50)
    let scan = try #require(try BlesendCommand.parseAsRoot(["scan", "--min-rssi", "-60"]) as? Scan)
    #expect(scan.minRSSI == -60)
    // The old spelling still works.
    let equals = try #require(try BlesendCommand.parseAsRoot(["--to", "pi", "--min-rssi=-50", "a.txt"]) as? Send)
    #expect(equals.minRSSI == -50)
}

// MARK: did you mean

@Test(arguments: [
    // word, exists as a file, suggestion
    ("histroy", false, "history"),
    ("stauts", false, nil),           // no command close enough among these
    ("trsut", false, "trust"),
    ("piar", false, "pair"),
    ("scna", false, "scan"),
    ("recievers", false, "receivers"),
    ("histroy", true, nil),           // a file of that name: sent, as before
    ("history", false, nil),          // a command
    ("report.pdf", false, nil),       // nothing close
    ("./histroy", false, nil),        // a path
    ("--to", false, nil),             // an option
    ("-", false, nil),                // standard input
] as [(String, Bool, String?)])
func aMistypedCommandIsRecognised(word: String, exists: Bool, expected: String?) {
    let commands = ["send", "pair", "scan", "keygen", "pubkey", "receivers", "history", "doctor", "trust"]
    #expect(CommandSuggestion.suggestion(for: word, commands: commands, fileExists: { _ in exists }) == expected)
}

@Test func editDistanceCountsASwapOnce() {
    #expect(CommandSuggestion.editDistance("histroy", "history") == 1)
    #expect(CommandSuggestion.editDistance("stauts", "status") == 1)
    #expect(CommandSuggestion.editDistance("", "abc") == 3)
    #expect(CommandSuggestion.editDistance("kitten", "sitting") == 3)
}

@Test(arguments: [
    ("blesend", ["histroy"], "blesend: error: unknown command \"histroy\"; did you mean \"history\"?\n"),
    ("blerecv", ["trsut", "list"], "blerecv: error: unknown command \"trsut\"; did you mean \"trust\"?\n"),
])
func aMistypedCommandIsRefusedWithASuggestion(tool: String, arguments: [String], firstLine: String) throws {
    let run = try CommandRun.run(tool, arguments)
    #expect(run.status == 64)
    #expect(run.stderr.hasPrefix(firstLine), "\(run.stderr)")
    #expect(run.stdout.isEmpty)
}

// MARK: tool: error:

@Test(arguments: [
    ("blesend", ["a.txt"], "blesend: error: Missing expected argument '--to <name|key>'\n"),
    ("blesend", ["send", "--to", "pi"], "blesend: error: give at least one file to send (or - for standard input)\n"),
    ("blesend", ["--to", "pi", "--min-rssi", "x", "a.txt"], "blesend: error: The value 'x' is invalid for '--min-rssi <dBm>'\n"),
    ("blerecv", ["--nonsense"], "blerecv: error: Unknown option '--nonsense'\n"),
    ("blerecv", ["trust", "add"], "blerecv: error: Missing expected argument '<key>'\n"),
])
func everyUsageErrorHasTheToolsPrefixAndExits64(tool: String, arguments: [String], firstLine: String) throws {
    let run = try CommandRun.run(tool, arguments)
    #expect(run.status == 64)
    #expect(run.stderr.hasPrefix(firstLine), "\(run.stderr)")
    #expect(!run.stderr.contains("Error:"))
    #expect(run.stderr.contains("\(tool): hint: see '\(tool)"), "\(run.stderr)")
    #expect(run.stdout.isEmpty)
}

@Test(arguments: ["blesend", "blerecv"])
func helpStillGoesToStandardOutputWithStatus0(tool: String) throws {
    let help = try CommandRun.run(tool, ["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("USAGE: \(tool)"))
    #expect(help.stderr.isEmpty)
    let sub = try CommandRun.run(tool, ["pubkey", "--help"])
    #expect(sub.status == 0)
    #expect(sub.stdout.contains("\(tool) pubkey"), "\(sub.stdout)")
}

@Test func theUsageFailureIsDecidedInOnePlace() {
    let failure = UsageFailure(ValidationError("no"), root: BlesendCommand.self)
    #expect(failure?.status == 64)
    #expect(failure?.text.hasPrefix("blesend: error: no\nblesend: hint: see 'blesend --help'") == true)
    #expect(UsageFailure(CleanExit.helpRequest(), root: BlesendCommand.self) == nil)
    #expect(UsageFailure(ExitCode(71), root: BlesendCommand.self) == nil)
}

// MARK: blerecv pubkey, blerecv keygen

@Test func blerecvMakesAndShowsItsOwnKey() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blerecv-keys-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let keygen = try CommandRun.run("blerecv", ["keygen", "-o", "\(dir)/id"])
    #expect(keygen.status == 0, "\(keygen.stderr)")
    #expect(keygen.stdout.hasPrefix("blesend-pub1:"))
    #expect(keygen.stderr.hasPrefix("blerecv: wrote \(dir)/id"), "\(keygen.stderr)")
    let pubkey = try CommandRun.run("blerecv", ["pubkey", "--key", "\(dir)/id"])
    #expect(pubkey.status == 0, "\(pubkey.stderr)")
    #expect(pubkey.stdout == keygen.stdout)
    let missing = try CommandRun.run("blerecv", ["pubkey", "--key", "\(dir)/none"])
    #expect(missing.status == 65)
    #expect(missing.stderr.hasPrefix("blerecv: error:"), "\(missing.stderr)")
    #expect(missing.stderr.contains("blerecv: hint: make a key pair with: blerecv keygen"), "\(missing.stderr)")
}

// MARK: exit codes

@Test func signalsExitWithTheirDocumentedCodes() {
    #expect(Interrupts.status(for: SIGINT) == .interrupted)
    #expect(Interrupts.status(for: SIGTERM).rawValue == 143)
    #expect(Interrupts.status(for: SIGHUP).rawValue == 129)
    // On a terminal SIGHUP means it went away; off one, blerecv's SIGHUP reloads its trust.
    #expect(Interrupts.handledSignals(onTerminal: true).contains(SIGHUP))
    #expect(!Interrupts.handledSignals(onTerminal: false).contains(SIGHUP))
}

@Test func theReadmesExitTableListsEveryCode() throws {
    let readme = try String(contentsOfFile: packageRoot + "/README.md", encoding: .utf8)
    for status in ExitStatus.allCases {
        #expect(readme.contains("\n| \(status.rawValue) | "), "README lacks exit \(status.rawValue)")
    }
    #expect(!readme.contains("partial files were removed"))
}

/// The package's root folder (this file is Tests/CLITests/…).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

// MARK: completions

@Test func completionsCompleteFilesAndFolders() {
    let bash = BlesendCommand.completionScript(for: .bash)
    #expect(bash.contains("'--to')\n        __blesend_add_completions -o plusdirs -fX '!*.@(pub)'"))
    #expect(bash.contains("'--key')\n        __blesend_add_completions -f\n"))
    #expect(bash.contains("'--state')\n        __blesend_add_completions -d\n"))
    #expect(bash.contains("    *)\n        __blesend_add_completions -f\n"))   // the files to send
    let zsh = BlesendCommand.completionScript(for: .zsh)
    #expect(zsh.contains("]:name|key:_files -g '\\''*.pub'\\'''"))
    #expect(zsh.contains("'*:file:_files'"))
    #expect(zsh.contains("]:dir:_files -/'"))

    let receiverBash = BlerecvCommand.completionScript(for: .bash)
    for option in ["--out", "--trust", "--state"] {
        #expect(receiverBash.contains("'\(option)')\n        __blerecv_add_completions -d\n"), "\(option)")
    }
    let receiverZsh = BlerecvCommand.completionScript(for: .zsh)
    #expect(receiverZsh.contains("':key:_files -g '\\''*.pub'\\'''"))   // trust add KEY
    #expect(receiverZsh.contains("--out[") && receiverZsh.contains("]:dir:_files -/'"))
    let fish = BlerecvCommand.completionScript(for: .fish)
    #expect(fish.contains("-l 'out'") && fish.contains("(__blerecv_complete_directories)"))
    #expect(BlesendCommand.completionScript(for: .bash).contains("_blesend_receivers_add") &&
            BlesendCommand.completionScript(for: .bash).contains("-fX '!*.@(pub)'"))
}

/// Runs bash's completion of `words` (the last one being completed) in `folder` with the script
/// the built `tool` prints; returns what it offers.
func bashCompletions(_ tool: String, _ words: [String], in folder: String) throws -> Set<String> {
    let script = try CommandRun.run(tool, ["--generate-completion-script", "bash"]).stdout
    try script.write(toFile: "\(folder)/.completion.bash", atomically: true, encoding: .utf8)
    let quoted = words.map { "'\($0)'" }.joined(separator: " ")
    let body = """
    cd '\(folder)' && source ./.completion.bash
    COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
    _\(tool) '\(tool)' '\(words.last!)' '\(words.count > 1 ? words[words.count - 2] : "")'
    printf '%s\\n' "${COMPREPLY[@]}"
    """
    let bash = Process()
    bash.executableURL = URL(fileURLWithPath: "/bin/bash")
    bash.arguments = ["-c", body]
    let out = Pipe()
    bash.standardOutput = out
    try bash.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    bash.waitUntilExit()
    return Set(String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
}

@Test func bashCompletesTheDefaultSubcommandsWordsAtTheTopLevel() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    for file in ["pi.pub", "report.pdf"] { FileManager.default.createFile(atPath: "\(dir)/\(file)", contents: Data()) }
    // blesend --to <TAB>: .pub files and folders, as `blesend send --to` has.
    let to = try bashCompletions("blesend", ["blesend", "--to", ""], in: dir)
    #expect(to.contains("pi.pub") && to.contains("sub") && !to.contains("report.pdf"), "\(to)")
    // blesend <TAB>: the subcommands and the files to send.
    let first = try bashCompletions("blesend", ["blesend", ""], in: dir)
    #expect(first.isSuperset(of: ["history", "pair", "report.pdf", "pi.pub"]), "\(first)")
    // blesend --to pi <TAB>: files.
    let files = try bashCompletions("blesend", ["blesend", "--to", "pi", "re"], in: dir)
    #expect(files.contains("report.pdf"), "\(files)")
    // blerecv --out <TAB>: folders only.
    let out = try bashCompletions("blerecv", ["blerecv", "--out", ""], in: dir)
    #expect(out == ["sub"], "\(out)")
}
