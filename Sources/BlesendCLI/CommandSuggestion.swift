/// "Did you mean": a first word that is no command and no file, but a command's name mistyped
/// (`blesend histroy`), is refused as an unknown command instead of falling into the default
/// subcommand as a file to send. Pure: the caller says which names exist and which files.
public enum CommandSuggestion {
    /// The command `word` was probably meant to be, or nil: `word` is a command, an option, a file
    /// that exists, or nothing close to a command's name.
    public static func suggestion(for word: String, commands: [String], fileExists: (String) -> Bool) -> String? {
        guard !word.isEmpty, !word.hasPrefix("-"), !commands.contains(word), !word.contains("/"), !fileExists(word) else { return nil }
        let scored = commands.map { (name: $0, distance: editDistance(word, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= allowedDistance(best.name) else { return nil }
        return best.name
    }

    /// One slip in a short name (pair, scan), two in a longer one (histroy, recievers).
    static func allowedDistance(_ name: String) -> Int { name.count <= 4 ? 1 : 2 }

    /// Optimal string alignment distance: insertions, deletions, substitutions, and swaps of two
    /// neighbouring letters (the commonest typo) each count one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }

    /// The message for the refusal.
    static func message(word: String, suggestion: String) -> String {
        "unknown command \"\(word)\"; did you mean \"\(suggestion)\"?"
    }
}
