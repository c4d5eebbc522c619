/// The report as people read it (one line per check, ✓ ✗ !, the fix under each ✗ or !) and as
/// `--json` writes it (one `doctor` event: `checks`, `ok`, `role`; docs/json-events.md, "doctor").
extension DoctorReport {
    func text(tool: String) -> String {
        let width = (checks.map(\.name.label.count).max() ?? 0) + 2
        var lines: [String] = []
        for check in checks {
            let mark = switch check.severity {
            case .ok: "✓"
            case .warn: "!"
            case .fail: "✗"
            }
            lines.append("\(mark) \(check.name.label.padding(width))\(TerminalText.sanitized(check.detail))")
            if let fix = check.fix { lines.append("  " + String(repeating: " ", count: width) + "fix: " + TerminalText.sanitized(fix)) }
        }
        if !notChecked.isEmpty {
            lines.append("  not checked until the ✗ above is fixed: " + notChecked.map(\.label).joined(separator: ", "))
        }
        lines.append("\(tool) doctor: " + verdict)
        return lines.joined(separator: "\n") + "\n"
    }

    /// "ready to send (1 warning)", "2 problems: the receiver cannot work here (exit 67)".
    var verdict: String {
        let failures = checks.filter { $0.severity == .fail }.count
        let warnings = checks.filter { $0.severity == .warn }.count
        if failures == 0 {
            let ready = role == .sender ? "ready to send" : "ready to receive"
            return ready + (warnings == 0 ? "" : " (\(Self.count(warnings, "warning")))")
        }
        return "\(Self.count(failures, "problem")): the \(role.rawValue) cannot work here (exit \(exitStatus.rawValue))"
    }

    var json: String {
        let items: [JSONLine.Value] = checks.map { check in
            .object([
                ("name", .string(check.name.rawValue)), ("ok", .bool(check.severity != .fail)), ("detail", .string(check.detail)),
                ("fix", .of(check.fix)), ("severity", .string(check.severity.rawValue)),
            ])
        }
        return JSONLine("doctor", [("checks", .array(items)), ("ok", .bool(ok)), ("role", .string(role.rawValue))]).text
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
