#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Keys

/// Which program a command shared by both tools runs in: its messages and examples name it.
protocol ToolName {
    static var name: String { get }
}

enum SenderTool: ToolName { static let name = "blesend" }
enum ReceiverTool: ToolName { static let name = "blerecv" }

/// `blesend keygen`, `blerecv keygen`: makes our key pair (a receive-only machine needs no blesend).
struct Keygen<Tool: ToolName>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "keygen",
            abstract: "Make a key pair: a secret key file (mode 0600) and PATH.pub.",
            discussion: """
            The public key is one line starting with blesend-pub1: — give it to your peers. A receiver \
            adds it with `blerecv trust add`; a sender pins a receiver's with `blesend receivers add` or `--to`. Compare fingerprints by \
            reading them aloud: all eight groups of four hex digits (128 bits). blesend and blerecv share \
            the default key: one key pair serves a machine that sends and receives.

            Examples:
              \(Tool.name) keygen                      # writes ~/.config/blesend/id and id.pub
              \(Tool.name) keygen -o ./alice           # writes ./alice and ./alice.pub
            """)
    }

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the secret key; the public key goes to PATH.pub.", valueName: "path"),
            completion: .file())
    var output: String?

    @Flag(name: .long, help: "Replace an existing key pair (the old secret key is lost).")
    var force = false

    func run() async throws {
        let path = output ?? KeyLocation.defaultPath
        try await runReporting(tool: Tool.name) { () async throws(CLIError) in
            let identity = try KeyLocation.makeKeyPair(at: output, force: force)
            Console.out("\(identity.publicKey.text)\n")
            Console.err("\(Tool.name): wrote \(path) (secret, keep private) and \(path).pub\n")
            Console.err("\(Tool.name): fingerprint \(identity.publicKey.fingerprint)\n")
        }
    }
}

/// `blesend pubkey`, `blerecv pubkey`: prints our public key and fingerprint.
struct Pubkey<Tool: ToolName>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "pubkey",
            abstract: "Print your public key and its fingerprint.",
            discussion: """
            Examples:
              \(Tool.name) pubkey                      # the default key
              \(Tool.name) pubkey --key ./alice        # another key
              \(Tool.name) pubkey > alice.pub          # a file to hand to a peer
            """)
    }

    @Option(help: ArgumentHelp("Secret key file (default: $XDG_CONFIG_HOME/blesend/id or ~/.config/blesend/id).", valueName: "path"),
            completion: .file())
    var key: String?

    func run() async throws {
        try await runReporting(tool: Tool.name) { () async throws(CLIError) in
            let identity = try KeyLocation.loadIdentity(key, tool: Tool.name)
            Console.out("\(identity.publicKey.text)\n")
            Console.err("fingerprint: \(identity.publicKey.fingerprint)\n")
        }
    }
}

extension String {
    var components: [String] { split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
}

/// Runs a command body; a `CLIError` is printed as `tool: error:` / `tool: hint:` (and, with
/// `--json`, as an `error` event) and becomes the exit code.
func runReporting(tool: String, reporter: Reporter? = nil, _ body: () async throws(CLIError) -> Void) async throws {
    do {
        try await body()
    } catch {
        if let reporter {
            reporter.error(error)
        } else {
            // A command with `--json` but no Reporter (history, partials, trust list) still ends its
            // events with the `error` (docs/json-events.md).
            if UsageErrorEvent.wantsJSON(CommandLine.arguments.dropFirst()) {
                Console.out(JSONLine.error(error.status, message: error.message, hint: error.hint).text + "\n")
            }
            Console.err("\(tool): error: \(error.message)\n")
            if let hint = error.hint { Console.err("\(tool): hint: \(hint)\n") }
        }
        throw ExitCode(error.status.rawValue)
    }
}
