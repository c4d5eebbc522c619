import BlesendCLI

/// `blesend-labcheck exit-codes`: every `ExitStatus` as a shell assignment, one per line
/// (`EXIT_PEER_REFUSED=66`), named after its Swift case. The lab's scripts source this instead of
/// typing the numbers, so a renumbered or renamed status shows up there at once (an unset name under
/// `set -u`), never as a test that quietly expects the old number.
enum ExitCodes {
    static func shellAssignments() -> String {
        ExitStatus.allCases.map { "EXIT_\(upperSnake(String(describing: $0)))=\($0.rawValue)\n" }.joined()
    }

    /// `peerRefused` → `PEER_REFUSED`, `localIO` → `LOCAL_IO`, `ioError` → `IO_ERROR`: a word starts
    /// at an upper-case letter after a lower-case letter or digit, or at the last capital of a run
    /// that a lower-case letter follows (`HTTPServer` → `HTTP_SERVER`).
    static func upperSnake(_ name: String) -> String {
        let chars = Array(name)
        var out = ""
        for (i, c) in chars.enumerated() {
            if i > 0, c.isUppercase {
                let before = chars[i - 1]
                let after = i + 1 < chars.count ? chars[i + 1] : nil
                if before.isLowercase || before.isNumber || (before.isUppercase && after?.isLowercase == true) {
                    out += "_"
                }
            }
            out += c.uppercased()
        }
        return out
    }
}
