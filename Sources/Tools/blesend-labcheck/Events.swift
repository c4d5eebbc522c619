import Foundation

/// `blesend-labcheck events FILE QUERY...`: what the lab's scripts ask of a `--json` log (one JSON
/// object per line, docs/json-events.md), read with the JSON parser instead of grep and sed.
///
///     valid                  exit 0 if every line is JSON (the tools write nothing else on stdout)
///     count EVENT            how many EVENT lines
///     first EVENT KEY        KEY of the first EVENT line ("" if there is none, or it has no KEY)
///     last EVENT KEY         KEY of the last EVENT line
///     all EVENT KEY          KEY of every EVENT line that has it, one per line
///     has EVENT [COND...]    exit 0 if some EVENT line meets every COND: KEY=VALUE, KEY~TEXT, KEY
///
/// Values print as `jsonText` writes them. Lines that are not JSON objects are skipped by every
/// query but `valid`; a missing file is a log without events. Exit 64 on a query it does not know.
enum Events {
    static let usage = """
        usage: blesend-labcheck events FILE valid | count EVENT | first EVENT KEY | last EVENT KEY
                                           | all EVENT KEY | has EVENT [KEY=VALUE | KEY~TEXT | KEY]...
        """

    /// Runs one query; returns the exit status.
    static func run(_ args: [String]) -> Int32 {
        guard args.count >= 2 else { return usageError() }
        let log = EventLog(path: args[0])
        let query = args[1]
        let rest = Array(args.dropFirst(2))
        switch (query, rest.count) {
        case ("valid", 0):
            if let bad = log.firstNonJSONLine {
                FileHandle.standardError.write(Data("\(args[0]):\(bad.number): not JSON: \(bad.text)\n".utf8))
                return 1
            }
            return log.exists ? 0 : 1
        case ("count", 1):
            print(log.events(rest[0]).count)
        case ("first", 2):
            print(log.events(rest[0]).first.flatMap { $0[rest[1]] }.map(jsonText) ?? "")
        case ("last", 2):
            print(log.events(rest[0]).last.flatMap { $0[rest[1]] }.map(jsonText) ?? "")
        case ("all", 2):
            for value in log.events(rest[0]).compactMap({ $0[rest[1]] }) { print(jsonText(value)) }
        case ("has", 1...):
            let conditions = rest.dropFirst().map(FieldCondition.init)
            let found = log.events(rest[0]).contains { event in conditions.allSatisfy { $0.holds(for: event) } }
            return found ? 0 : 1
        default:
            return usageError()
        }
        return 0
    }

    private static func usageError() -> Int32 {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        return 64
    }
}

/// A `--json` log as lines, each parsed once.
struct EventLog {
    let exists: Bool
    private let lines: [(text: String, value: Any?)]

    init(path: String) {
        guard let data = FileManager.default.contents(atPath: path) else {
            exists = false
            lines = []
            return
        }
        exists = true
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        lines = text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            (String(line), try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]))
        }
    }

    /// The first line that does not parse (numbered from 1), if any.
    var firstNonJSONLine: (number: Int, text: String)? {
        lines.firstIndex { $0.value == nil }.map { ($0 + 1, lines[$0].text) }
    }

    /// The objects whose `event` is `name`, in order.
    func events(_ name: String) -> [[String: Any]] {
        lines.compactMap { $0.value as? [String: Any] }.filter { $0["event"] as? String == name }
    }
}
