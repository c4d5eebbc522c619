import ArgumentParser
import Foundation

/// `blerecv status`: what the running receiver is doing, as it sees itself.
struct ReceiverStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the running receiver is doing: links, senders, files, rates.",
        discussion: """
        Asks the blerecv running on this machine, through its status socket: \
        $RUNTIME_DIRECTORY/status.sock (the service: /run/blesend/status.sock), else \
        $XDG_RUNTIME_DIR/blesend/status.sock. The service's socket is for the user and group \
        blesend: run `sudo -u blesend blerecv status`, or add yourself to group blesend.

        Shows the adapter, whether it advertises, how many senders it trusts and serves at once; \
        each link with its sender, fingerprint, transport, file, bytes, rate and ETA; the partial \
        files kept for a resume; the last 5 files.

        Examples:
          blerecv status
          sudo -u blesend blerecv status --json

        Exit codes: 0 a receiver answered, 66 the service's socket is not yours to ask (see above), 68 no receiver is running (no socket answers).
        """)

    @Option(help: ArgumentHelp("The status socket to ask (default: see above).", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the receiver's status event (docs/json-events.md) instead of lines for people.")
    var json = false

    func run() async throws {
        try await runReporting(tool: "blerecv") { () async throws(CLIError) in
            let paths = socket.map { [$0] } ?? StatusSocketPath.candidates()
            var refused: String?
            for path in paths {
                let line: String
                switch StatusClient.ask(path) {
                case .line(let text): line = text
                case .notAllowed:
                    refused = refused ?? path
                    continue
                case .none: continue
                }
                if json {
                    Console.out(line.hasSuffix("\n") ? line : line + "\n")
                } else {
                    Console.out(StatusText.render(json: line) ?? line)
                }
                return
            }
            if let refused {
                throw CLIError(.peerRefused, "you may not ask the receiver at \(refused) (it is the service's: user and group blesend)",
                               hint: "run: sudo -u blesend blerecv status, or add yourself to group blesend (then log in again)")
            }
            throw CLIError(.peerNotFound, "no receiver is running here (no answer at \(paths.joined(separator: " or ")))",
                           hint: "start one (blerecv, or systemctl start blerecv); for the service, run this as blesend or in group blesend")
        }
    }
}

/// The status event, as lines for people (what `StatusSnapshot.text` says, from the JSON line a
/// receiver sent).
enum StatusText {
    static func render(json line: String) -> String? {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        var lines = ["blerecv: \(object["status"] as? String ?? "?")"]
        let adapter = object["adapter"] as? String ?? "default"
        let advertising = (object["advertising"] as? Bool ?? false) ? "advertising" : "not advertising"
        lines.append("  adapter \(adapter), \(advertising), \(object["trusted"] as? Int ?? 0) trusted, at most \(object["max_links"] as? Int ?? 0) links")
        lines.append("  fingerprint \(object["fingerprint"] as? String ?? "?")")
        if let out = object["out"] as? String {
            lines.append("  files go to \(out)" + ((object["partials"] as? Int).map { ", \($0) partial(s) kept for a resume" } ?? ""))
        }
        for case let link as [String: Any] in object["links"] as? [Any] ?? [] {
            var text = "  link \(link["channel"] as? Int ?? 0): \(link["peer"] as? String ?? "(not authenticated)") over \(link["transport"] as? String ?? "?")"
            if let file = link["file"] as? String {
                text += ", \(file) \(Formatting.bytes(UInt64(link["bytes"] as? Int ?? 0)))"
                if let total = link["total"] as? Int { text += " of \(Formatting.bytes(UInt64(total)))" }
                if let rate = link["rate"] as? Double ?? (link["rate"] as? Int).map(Double.init) { text += ", \(Formatting.rate(rate))" }
                if let eta = link["eta"] as? Int { text += ", ETA \(Formatting.seconds(Double(eta)))" }
            }
            lines.append(text)
        }
        let recent = object["recent"] as? [Any] ?? []
        if !recent.isEmpty { lines.append("  last files:") }
        for case let result as [String: Any] in recent {
            let saved = result["saved"] as? Bool ?? false
            lines.append("    \(saved ? "saved " : "FAILED") \(result["name"] as? String ?? "?")  \(Formatting.bytes(UInt64(result["bytes"] as? Int ?? 0)))  from \(result["peer"] as? String ?? "?")")
        }
        return lines.map(TerminalText.sanitized).joined(separator: "\n") + "\n"
    }
}
