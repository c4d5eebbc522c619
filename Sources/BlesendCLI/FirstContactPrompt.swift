import Keys
import Session
import SessionRunner

/// First contact (`blerecv --ask`): shows the user an unknown sender (its fingerprint, what it
/// offers, the code that blesend shows too), asks whether to accept it and under which name,
/// and writes its key to the trust directory as `blerecv trust` does. Anything but yes, an
/// empty line, the end of input or the time running out is a no, and writes nothing.
struct FirstContactPrompt {
    let write: (String) -> Void
    let trustDirectory: String
    /// Names asked for before giving up (a no).
    static let nameAttempts = 5

    func ask(_ request: ApprovalRequest, input: inout some LineSource) async -> FirstContactAnswers.Answer {
        write(Self.describe(request))
        write("accept this sender? [y/N] ")
        guard let yes = await input.nextLine(), ["y", "yes"].contains(yes.trimmed.lowercased()) else {
            write("not accepted: the sender is refused and nothing was written\n")
            return .decline
        }
        for _ in 0..<Self.nameAttempts {
            write("name for this key: ")
            guard let name = await input.nextLine()?.trimmed, !name.isEmpty else { break }
            do throws(KeyError) {
                let path = try TrustStore.add(request.key, name: name, directory: trustDirectory)
                write("trusting \(name) (fingerprint \(request.fingerprint)): wrote \(path)\n")
                return .approve(name: name)
            } catch {
                write("\(error.message)\(error.hint.map { " (\($0))" } ?? "")\n")
            }
        }
        write("no name given: the sender is refused and nothing was written\n")
        return .decline
    }

    /// What the user reads before answering.
    static func describe(_ request: ApprovalRequest) -> String {
        let offered = request.offered
        let what = switch offered.kind {
        case .file: "\(TerminalText.sanitized(offered.name))  \(offered.size.map(Formatting.bytes) ?? "size unknown (a stream)")"
        case .folder: "the folder \(TerminalText.sanitized(offered.name))/"
        case .folderEnd: "the end of a folder sent earlier"
        }
        return """
        first contact: a sender this receiver does not know wants to send
          offered:     \(what)
          fingerprint: \(request.fingerprint)
          code:        \(request.code)   check that blesend shows the same code

        """
    }
}

extension String {
    fileprivate var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
