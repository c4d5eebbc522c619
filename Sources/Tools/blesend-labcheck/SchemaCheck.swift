import EventSchema
import Foundation

/// `blesend-labcheck schema SCHEMA FILE...`: every event line of every FILE that is one of the
/// tools' `--json` logs matches SCHEMA (docs/json-events.schema.json); EventLogCheck says which
/// files and lines. Prints `FILE:LINE: problems: line` for each line that does not, and one summary
/// line; exit 0 when all match, 1 when one does not or the schema cannot be read, 64 on a usage error.
enum SchemaCheck {
    static func run(_ args: [String]) -> Int32 {
        guard args.count >= 1 else {
            FileHandle.standardError.write(Data("usage: blesend-labcheck schema SCHEMA [FILE]...\n".utf8))
            return 64
        }
        let schema: EventSchema
        do {
            schema = try EventSchema(contentsOf: args[0])
        } catch {
            print("\(args[0]): cannot use the schema: \(error)")
            return 1
        }
        var logs = 0, lines = 0, bad = 0
        for path in args.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let check = EventLogCheck(text: String(decoding: data, as: UTF8.self), schema: schema)
            if check.skipped { continue }
            logs += 1
            lines += check.checked
            for line in check.bad {
                bad += 1
                print("\(path):\(line.number): \(line.problems.joined(separator: "; ")): \(line.text.prefix(300))")
            }
        }
        print("\(lines) event lines in \(logs) --json logs checked against \(args[0]): \(bad) do not match")
        return bad == 0 ? 0 : 1
    }
}
