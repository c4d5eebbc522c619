import Foundation

/// `blesend-labcheck object FILE COND...`: exit 0 if FILE holds one JSON object (the whole file,
/// e.g. `doctor --json`) that meets every COND (`KEY=VALUE`, `KEY~TEXT` or `KEY`, as in `events`);
/// 1 if it does not, or is not such an object; 64 on a usage error.
enum Document {
    static func run(_ args: [String]) -> Int32 {
        guard let path = args.first else {
            FileHandle.standardError.write(Data("usage: blesend-labcheck object FILE [KEY=VALUE | KEY~TEXT | KEY]...\n".utf8))
            return 64
        }
        guard let data = FileManager.default.contents(atPath: path),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else {
            FileHandle.standardError.write(Data("\(path): not one JSON object\n".utf8))
            return 1
        }
        return args.dropFirst().map(FieldCondition.init).allSatisfy { $0.holds(for: object) } ? 0 : 1
    }
}
