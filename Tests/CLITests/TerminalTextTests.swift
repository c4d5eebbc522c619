import Logging
import Testing
@testable import BlesendCLI

/// Issue 9, defect 1: a receiver holding the pinned key chose a stored name with ESC, CR and BEL
/// sequences, and blesend wrote them to the terminal. Nothing a peer says reaches it raw now.
@Suite struct TerminalTextTests {
    static let hostile = "x.txt\u{1B}[2J\u{1B}[31m\rblesend: sent /etc/shadow\u{07}\u{9B}\u{202E}txt.exe\u{2028}"

    static func hasNoControls(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || TerminalText.isHazardous($0) }
    }

    @Test func controlsBecomeVisibleEscapes() {
        let shown = TerminalText.sanitized(Self.hostile)
        #expect(shown == "x.txt\\e[2J\\e[31m\\rblesend: sent /etc/shadow\\u{7}\\u{9B}\\u{202E}txt.exe\\u{2028}")
        #expect(Self.hasNoControls(shown))
        #expect(TerminalText.sanitized("résumé – 日本語.txt") == "résumé – 日本語.txt", "ordinary text is untouched")
    }

    @Test func reporterLinesAndErrorsAreSanitized() {
        final class Lines: @unchecked Sendable { var text = "" }
        let lines = Lines()
        let reporter = Reporter(options: .init(tool: "blesend"), logger: Logger(label: "test"), writeError: { lines.text += $0 })
        reporter.say("blesend: sent a.txt (saved there as \(Self.hostile))")
        reporter.error(CLIError(.fileRejected, "\(Self.hostile): refused", hint: Self.hostile))
        #expect(lines.text.contains("\\e[2J"))
        #expect(Self.hasNoControls(lines.text.replacingOccurrences(of: "\n", with: "")), "\(lines.text)")
    }

    @Test func jsonEscapesEveryControlFormatAndSeparatorCharacter() {
        let quoted = JSONLine.quote(Self.hostile)
        #expect(Self.hasNoControls(quoted))
        #expect(quoted.contains("\\u001b") && quoted.contains("\\u009b") && quoted.contains("\\u202e") && quoted.contains("\\u2028"))
        #expect(JSONLine.quote("\u{E0001}") == "\"\\udb40\\udc01\"", "beyond the BMP: a surrogate pair")
    }
}
