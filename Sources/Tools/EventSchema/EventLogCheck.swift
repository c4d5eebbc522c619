/// One `--json` log (a file of the lab's logs) checked line by line against the schema.
///
/// A log is one of the tools' when some line starts with `{"event":"`, as JSONLine writes it (the
/// lab's Python helpers write `{"event": ` with a space, and are not ours to check). Then every
/// line that starts with `{` must be an event the schema accepts; other lines (a log that also
/// caught standard error) are left alone.
public struct EventLogCheck: Equatable {
    public struct BadLine: Equatable {
        public let number: Int
        public let text: String
        public let problems: [String]
    }

    /// Not one of the tools' `--json` logs: nothing was checked.
    public let skipped: Bool
    /// How many lines were checked.
    public let checked: Int
    public let bad: [BadLine]

    public init(text: String, schema: EventSchema) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.contains(where: { $0.hasPrefix(#"{"event":""#) }) else {
            skipped = true
            checked = 0
            bad = []
            return
        }
        skipped = false
        var checked = 0
        var bad: [BadLine] = []
        for (i, line) in lines.enumerated() where line.hasPrefix("{") {
            checked += 1
            let problems = schema.violations(ofLine: line)
            if !problems.isEmpty { bad.append(BadLine(number: i + 1, text: line, problems: problems)) }
        }
        self.checked = checked
        self.bad = bad
    }
}
