import Keys
import Session
import SessionRunner

/// First contact (`blerecv --ask`): shows the user an unknown sender (its fingerprint and what it
/// offers), has the user type the 6-digit code that blesend shows on the sender, and, if it is
/// this handshake's code, asks under which name to trust the key and writes it to the trust
/// directory as `blerecv trust` does.
///
/// The receiver never shows the code: the user can only accept by reading it off the sender, so
/// a man in the middle (whose handshake shows the sender another code) is declined, rather than
/// waved through by someone who answered "y" without comparing. Pending input is discarded before
/// each question, so that nothing typed earlier (for another stranger's prompt) answers it.
/// A wrong code, an empty line, the end of input or the time running out is a no, and writes nothing.
struct FirstContactPrompt {
    /// How the prompt ended.
    enum Outcome: Equatable {
        case accepted(name: String)
        case declined(Refusal)

        var answer: FirstContactAnswers.Answer {
            switch self {
            case .accepted(let name): .approve(name: name)
            case .declined: .decline
            }
        }
    }

    enum Refusal: Equatable {
        /// An empty line, the end of input, or no answer in time.
        case noCode
        /// A code that is not this handshake's: someone may be in the middle, or another sender's code was typed.
        case wrongCode
        /// The code matched, but no usable name was given.
        case noName
    }

    let write: (String) -> Void
    let trustDirectory: String
    /// Names asked for before giving up (a no).
    static let nameAttempts = 5

    func ask(_ request: ApprovalRequest, input: inout some LineSource) async -> Outcome {
        write(Self.describe(request))
        input.discardPending()
        write("type the 6-digit code blesend shows on the sender (empty: refuse): ")
        guard let typed = await input.nextLine(), !typed.trimmed.isEmpty else {
            write("no code typed: the sender is refused and nothing was written\n")
            return .declined(.noCode)
        }
        guard Self.matches(typed, code: request.code) else {
            write("that is not the code of this connection: the sender is refused and nothing was written"
                  + " (if blesend showed that code, someone may be in the middle)\n")
            return .declined(.wrongCode)
        }
        for _ in 0..<Self.nameAttempts {
            input.discardPending()
            write("codes match. name for this key: ")
            guard let name = await input.nextLine()?.trimmed, !name.isEmpty else { break }
            do throws(KeyError) {
                let path = try TrustStore.add(request.key, name: name, directory: trustDirectory)
                write("trusting \(name) (fingerprint \(request.fingerprint)): wrote \(path)\n")
                return .accepted(name: name)
            } catch {
                write("\(error.message)\(error.hint.map { " (\($0))" } ?? "")\n")
            }
        }
        write("no name given: the sender is refused and nothing was written\n")
        return .declined(.noName)
    }

    /// Whether `typed` is `code` ("ddd ddd"), spaces and tabs ignored.
    static func matches(_ typed: String, code: String) -> Bool {
        let wanted = digits(code)
        let given = String(typed.filter { $0 != " " && $0 != "\t" && $0 != "\r" })
        return wanted.count == 6 && given == wanted
    }

    /// What the user reads before answering: the sender, never the code.
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

        """
    }

    /// The ASCII digits of `text`.
    private static func digits(_ text: String) -> String {
        String(text.unicodeScalars.filter { ("0"..."9").contains($0) }.map(Character.init))
    }
}

extension String {
    fileprivate var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}
